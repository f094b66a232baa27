// The MPI job a distributed `tessera partition` runs in: one rank per machine, started by mpirun / srun (or by
// `tessera partition --ip-config`, which runs mpirun over ssh). Only the collectives the partitioner needs,
// over MPI_COMM_WORLD, each called by every rank in the same order.
//
// exchange() is the one all-to-all: point-to-point messages straight from the senders' vectors into the
// receiver's, each at most kMessageBytes so MPI's int counts never overflow; callers bound what they hand it
// by working through their data in batches (rounds_for()).
//
// A failed MPI call, and an error on any rank, ends the whole job: main() catches the error, prints it with
// the rank, and calls abort(), which makes mpirun stop every other rank. Not thread-safe: one thread calls.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tessera {

class MpiWorld {
 public:
  // Initialises MPI (with MPI_THREAD_MULTIPLE, which PT-Scotch requires).
  MpiWorld(int* argc, char*** argv);
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return MPI_COMM_WORLD; }
  const std::string& host() const { return host_; }
  // How many ranks of this job run on this machine (shared memory reach), this one included.
  int ranks_on_this_host() const { return ranks_on_host_; }

  void barrier() const;
  [[noreturn]] void abort(int code) const;

  int64_t sum(int64_t value) const;
  int64_t max(int64_t value) const;
  // Element-wise sum of equally long vectors over all ranks, in place.
  void sum_in_place(std::vector<int64_t>* values) const;
  // values[r] = `value` of rank r.
  std::vector<int64_t> gather_all(int64_t value) const;
  // Every rank's string, by rank.
  std::vector<std::string> gather_all(const std::string& value) const;
  // Rank `root`'s string on every rank.
  std::string broadcast(std::string value, int root) const;

  // out[d] goes to rank d; returns what every rank sent here, concatenated in
  // rank order, and (optionally) how many items came from each rank. Sent
  // from and received into the callers' vectors, without staging copies.
  template <typename T>
  std::vector<T> exchange(const std::vector<std::vector<T>>& out, std::vector<int64_t>* from_counts = nullptr) const {
    std::vector<const char*> data(size_);
    std::vector<int64_t> bytes(size_);
    for (int d = 0; d < size_; ++d) {
      data[d] = reinterpret_cast<const char*>(out[d].data());
      bytes[d] = static_cast<int64_t>(out[d].size() * sizeof(T));
    }
    const std::vector<int64_t> from = exchange_counts(bytes);
    int64_t total = 0;
    for (int64_t f : from) total += f;
    std::vector<T> in(static_cast<size_t>(total) / sizeof(T));
    exchange_bytes(data, bytes, from, reinterpret_cast<char*>(in.data()));
    if (from_counts) {
      from_counts->clear();
      for (int64_t f : from) from_counts->push_back(f / static_cast<int64_t>(sizeof(T)));
    }
    return in;
  }

  // The number of batches of `batch` items every rank runs when this rank has
  // `local_items`: the largest over the ranks, so that all call the
  // collectives inside the loop equally often.
  int64_t rounds_for(int64_t local_items, int64_t batch) const;

  // The largest single message: MPI counts are ints.
  static constexpr int64_t kMessageBytes = int64_t{1} << 30;

 private:
  // Bytes each rank will receive from each, given what this one sends each.
  std::vector<int64_t> exchange_counts(const std::vector<int64_t>& to) const;
  // Sends bytes[d] from data[d] to every rank d, receiving from[r] bytes
  // from each rank r into `in`, in rank order.
  void exchange_bytes(const std::vector<const char*>& data, const std::vector<int64_t>& bytes,
                      const std::vector<int64_t>& from, char* in) const;

  int rank_ = 0;
  int size_ = 1;
  int ranks_on_host_ = 1;
  std::string host_;
};

// Answers, for each of `count` global keys, the value its owner holds: keys go
// to owner(key), which answers answer(key), and the answers come back in the
// keys' order. Collective: every rank calls it once per batch.
template <typename Owner, typename Answer>
std::vector<int64_t> distributed_lookup(const MpiWorld& world, const int64_t* keys, int64_t count, Owner&& owner,
                                        Answer&& answer) {
  const int ranks = world.size();
  std::vector<int> dest(count);
  std::vector<std::vector<int64_t>> queries(ranks);
  for (int64_t i = 0; i < count; ++i) {
    dest[i] = owner(keys[i]);
    queries[dest[i]].push_back(keys[i]);
  }
  std::vector<int64_t> from;
  std::vector<int64_t> asked = world.exchange(queries, &from);
  queries = {};
  std::vector<std::vector<int64_t>> replies(ranks);
  size_t at = 0;
  for (int r = 0; r < ranks; ++r) {
    replies[r].reserve(from[r]);
    for (int64_t j = 0; j < from[r]; ++j) replies[r].push_back(answer(asked[at++]));
  }
  asked = {};
  std::vector<int64_t> answers = world.exchange(replies);
  // Answers arrive grouped by owner, each group in the order asked.
  std::vector<int64_t> start(ranks + 1, 0);
  for (int64_t i = 0; i < count; ++i) ++start[dest[i] + 1];
  for (int r = 0; r < ranks; ++r) start[r + 1] += start[r];
  std::vector<int64_t> result(count);
  for (int64_t i = 0; i < count; ++i) result[i] = answers[start[dest[i]]++];
  return result;
}

// Replaces each of `keys` by what its owner answers for it (distributed_lookup),
// in batches of at most `batch` keys so that the messages stay bounded. Collective.
template <typename Owner, typename Answer>
void lookup_in_place(const MpiWorld& world, std::vector<int64_t>* keys, Owner&& owner, Answer&& answer,
                     int64_t batch = int64_t{1} << 22) {
  const int64_t count = static_cast<int64_t>(keys->size());
  const int64_t rounds = world.rounds_for(count, batch);
  for (int64_t round = 0; round < rounds; ++round) {
    const int64_t begin = std::min(count, round * batch), end = std::min(count, (round + 1) * batch);
    const std::vector<int64_t> answers = distributed_lookup(world, keys->data() + begin, end - begin, owner, answer);
    std::copy(answers.begin(), answers.end(), keys->begin() + begin);
  }
}

}  // namespace tessera

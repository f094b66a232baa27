// Collectives among the trainers of a job: sums, broadcasts, barriers and
// gathers over every trainer. By default they travel on the job's secured
// transport (a ring of ZeroMQ connections whose pieces only the job's
// processes can seal or open); an --insecure job uses c10d's ProcessGroupGloo
// (TCP in the clear), as before. libtorch stays out of this header.
//
// Contract: every member calls the same collectives in the same order with
// the same counts; a call returns when every member has made it. A member
// that dies makes the others' calls fail with tessera::Error within the job
// timeout instead of hanging. One Collectives object belongs to one thread
// at a time. With one member every call is a local no-op.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessera::job {
class Rendezvous;
}

namespace tessera::distributed {

class CollectiveBackend;

// What carries the bytes: as the job's security says (the secured ring;
// Gloo when the job is --insecure), or one of them by name (tests, benches).
enum class CollectiveWire { kAsTheJob, kSecuredRing, kGloo };

class Collectives {
 public:
  // `prefix` keeps this group's keys apart in the store; `my_ip` is the
  // address this member listens on (the machine's ip_config entry).
  Collectives(job::Rendezvous* store, const std::string& prefix, int rank, int size, const std::string& my_ip,
              int timeout_s, CollectiveWire wire = CollectiveWire::kAsTheJob);
  ~Collectives();
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  void all_reduce_sum(float* data, int64_t count);
  void all_reduce_sum(double* data, int64_t count);
  void all_reduce_sum(int64_t* data, int64_t count);
  void broadcast(float* data, int64_t count, int root);
  // Member `root`'s `bytes` at `data`, copied to every member.
  void broadcast_bytes(void* data, int64_t bytes, int root);
  void barrier();
  // Every member's vector (lengths may differ), by rank.
  std::vector<std::vector<int64_t>> all_gather(const std::vector<int64_t>& values);

  // Whether the bytes travel encrypted (false: Gloo, or one member).
  bool secured() const { return secured_; }

 private:
  std::unique_ptr<CollectiveBackend> backend_;  // null with one member
  bool secured_ = false;
  int rank_, size_;
};

}  // namespace tessera::distributed

// Where the processes of a job meet: a key-value store (c10d::TCPStore)
// hosted by machine 0's main server at the master address. Servers publish
// their addresses and tensors there; trainers read them and build their
// collectives on it. libtorch stays out of this header.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessera::dist {

class Rendezvous {
 public:
  // `host`: listen at addr:port (the store lives in this process); otherwise
  // connect, failing after `timeout_s` with a message naming the address.
  Rendezvous(const std::string& addr, int port, bool host, int timeout_s);
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  void set(const std::string& key, const std::string& value);
  // Waits for the key up to the timeout; the error names the key.
  std::string get(const std::string& key);
  bool check(const std::string& key);
  int64_t add(const std::string& key, int64_t delta);
  void remove(const std::string& key);
  // Waits until `key`'s counter reaches `target`.
  void wait_count(const std::string& key, int64_t target);

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
  int timeout_s_;
};

// Collectives among the trainers (c10d::ProcessGroupGloo). With one member
// every call is a local no-op.
class Collectives {
 public:
  // `prefix` keeps this group's keys apart in the store; `my_ip` is the
  // address Gloo listens on (the machine's ip_config entry).
  Collectives(Rendezvous* store, const std::string& prefix, int rank, int size, const std::string& my_ip,
              int timeout_s);
  ~Collectives();
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  void all_reduce_sum(float* data, int64_t count);
  void all_reduce_sum(double* data, int64_t count);
  void all_reduce_sum(int64_t* data, int64_t count);
  void broadcast(float* data, int64_t count, int root);
  void barrier();
  // Every member's vector (lengths may differ), by rank.
  std::vector<std::vector<int64_t>> all_gather(const std::vector<int64_t>& values);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  int rank_, size_;
};

}  // namespace tessera::dist

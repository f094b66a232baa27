// Where the processes of a job meet: a key-value store (c10d::TCPStore)
// hosted by machine 0's main server at the master address. Servers publish
// their addresses and tensors there; trainers read them and build their
// collectives on it. libtorch stays out of this header.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/distributed/collectives.h"

namespace tessera::distributed {

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

// The key under which machine `machine_id`'s main server publishes the
// prefix of its shared-memory segments (its tensors and row locks).
inline std::string segment_prefix_key(int machine_id) { return "main/" + std::to_string(machine_id); }

}  // namespace tessera::distributed

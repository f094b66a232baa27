// Where the processes of a job meet: a key-value store hosted by machine 0's
// main server at the master address and port, spoken to over the job's
// secured ZeroMQ transport (so only the job's processes can read or write
// it). Servers publish their addresses and tensors there; trainers read them
// and build their collectives on it (gloo_collectives.cc adapts it for Gloo).
// One object may be used from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "net/message.h"
#include "net/security.h"

namespace tessera::net {
class Client;
}

namespace tessera::job {

class RendezvousStore;

class Rendezvous {
 public:
  // `host`: also serve the store at addr:port from this process; either way,
  // connect to it, waiting up to `timeout_s` for it (errors name the address).
  Rendezvous(const std::string& addr, int port, bool host, int timeout_s, const net::Security& security);
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  void set(const std::string& key, const std::string& value);
  // Waits for the key up to the timeout; the error names the key.
  std::string get(const std::string& key);
  std::optional<std::string> try_get(const std::string& key);
  bool check(const std::string& key);
  int64_t add(const std::string& key, int64_t delta);
  bool remove(const std::string& key);
  int64_t num_keys();
  // Waits until `key`'s counter reaches `target`.
  void wait_count(const std::string& key, int64_t target);

  int timeout_s() const { return timeout_s_; }
  const std::string& where() const { return where_; }
  // The job's keys, which the trainers' collectives speak with too.
  const net::Security& security() const { return security_; }

 private:
  struct Answer;
  Answer call(net::RequestType type, const std::string& key, const std::string* value, int64_t iarg, const char* what);

  std::string where_;
  int timeout_s_;
  net::Security security_;
  std::unique_ptr<RendezvousStore> store_;  // when hosting
  std::mutex mutex_;                        // one request at a time on client_
  std::unique_ptr<net::Client> client_;
};

// The key under which machine `machine_id`'s main server publishes the
// prefix of its shared-memory segments (its tensors and row locks).
inline std::string segment_prefix_key(int machine_id) { return "main/" + std::to_string(machine_id); }

}  // namespace tessera::job

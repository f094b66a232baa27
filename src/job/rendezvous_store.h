// The rendezvous store's server: a map of keys to values and counters on
// its own thread, answering the requests below on a secured socket bound to
// the master address (never a wildcard address). Its requests are services
// like a partition server's, in a registry of their own (the store's state
// is its map, not a partition).
//
// Internal header.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "net/message.h"
#include "net/security.h"

namespace tessera::net {
class ServerSocket;
struct Request;
template <class State>
class ServiceRegistry;
}

namespace tessera::job {

constexpr net::RequestType kStoreSet = 11;     // frames: key, value
constexpr net::RequestType kStoreGet = 12;     // frames: key -> reply: iarg 1 and the value, or iarg 0 (not yet)
constexpr net::RequestType kStoreAdd = 13;     // frames: key; iarg = delta -> reply: iarg = the new count
constexpr net::RequestType kStoreCheck = 14;   // frames: key -> reply: iarg 1 if it is set
constexpr net::RequestType kStoreDelete = 15;  // frames: key -> reply: iarg 1 if it was set
constexpr net::RequestType kStoreCount = 16;   // -> reply: iarg = number of keys

// What the store holds: key -> value.
using StoreValues = std::map<std::string, std::string>;

// The store's services, registered in rendezvous_store.cc (the fuzz target
// of requests dispatches to them too).
net::ServiceRegistry<StoreValues>& store_services();

class RendezvousStore {
 public:
  // `peer_timeout_s`: the job's timeout (net::ServerSocket).
  RendezvousStore(const std::string& endpoint, const net::Security& security, int peer_timeout_s);
  ~RendezvousStore();  // stops serving
  RendezvousStore(const RendezvousStore&) = delete;
  RendezvousStore& operator=(const RendezvousStore&) = delete;

 private:
  void serve();

  std::unique_ptr<net::ServerSocket> socket_;
  StoreValues values_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tessera::job

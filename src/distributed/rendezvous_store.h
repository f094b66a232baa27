// The rendezvous store's server: a map of keys to values and counters on
// its own thread, answering the kStore* requests of net/message.h on a
// secured socket bound to the master address (never a wildcard address).
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <thread>

#include "net/security.h"

namespace tessera::net {
class ServerSocket;
struct Request;
}

namespace tessera::distributed {

class RendezvousStore {
 public:
  RendezvousStore(const std::string& endpoint, const net::Security& security);
  ~RendezvousStore();  // stops serving
  RendezvousStore(const RendezvousStore&) = delete;
  RendezvousStore& operator=(const RendezvousStore&) = delete;

 private:
  void serve();
  void handle(net::Request& request);

  std::unique_ptr<net::ServerSocket> socket_;
  std::map<std::string, std::string> values_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tessera::distributed

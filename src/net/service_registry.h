// The requests a server answers, registered by the part of the library that
// owns each one (as DGL's rpc.register_service and ps-lite's
// KVServer::set_request_handle): a server loop knows only its socket and its
// state, and the parts above it (the store, graph queries, sampling,
// checkpoints, the rendezvous store) add their services without the server
// or the transport depending on them.
//
// Every request type is one number on the wire, whichever registry serves
// it: a second claim of a type is recorded (not fatal during static
// initialisation) and RequestTypes::check() names both claimants; servers
// check before they serve, and a unit test checks too.
//
// Internal header. Registration happens during static initialisation (a
// registrar constant in the owning part's .cc file, or a test's); lookups
// happen only after main() starts, so the tables need no lock.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "net/message.h"
#include "net/transport.h"

namespace tessera::net {

using Frames = std::vector<zmq::message_t>;

// Which service claimed which request type. Every registry of a process
// claims in request_types(); a test may keep its own.
class RequestTypes {
 public:
  // Records that `service` answers requests of `type`. Returns false when
  // another service claimed it first (recorded for check()), or when `type`
  // is the transport's reply.
  bool claim(net::RequestType type, const std::string& service);
  // Throws tessera::Error naming every type claimed twice and its claimants.
  void check() const;
  const std::map<net::RequestType, std::string>& owners() const { return owners_; }

 private:
  std::map<net::RequestType, std::string> owners_;
  std::vector<std::string> conflicts_;
};

// The process's claims.
RequestTypes& request_types();

// Frame `frame` of `request` as int64 IDs whose count is header.shape[0];
// a missing or mis-sized frame throws net::ProtocolError.
const int64_t* ids_frame(net::Request& request, size_t frame, int64_t* count);

// The services one kind of server answers; `State` is what its handlers may
// use of the server that received the request.
template <class State>
class ServiceRegistry {
 public:
  explicit ServiceRegistry(RequestTypes& types = request_types()) : types_(&types) {}

  // Answers one request: fills `reply`'s shape fields and iarg and returns
  // the reply's payload frames. Throwing (tessera::Error, net::ProtocolError)
  // sends the message back as an error reply; the server keeps serving.
  using Handler = std::function<Frames(State& state, net::Request& request, net::Header* reply)>;

  // Registers `handler` as `service` for `type`. Returns true (a registrar
  // can be a namespace-scope constant); a type claimed before is recorded
  // and keeps its first handler.
  bool add(net::RequestType type, const std::string& service, Handler handler) {
    if (types_->claim(type, service)) handlers_.emplace(type, std::move(handler));
    return true;
  }

  // The reply frames of `request`'s handler; a type no service registered
  // throws net::ProtocolError.
  Frames dispatch(State& state, net::Request& request, net::Header* reply) const {
    const auto it = handlers_.find(request.header.type);
    if (it == handlers_.end())
      throw net::ProtocolError(fmt::format("no service answers request type {} here", request.header.type));
    return it->second(state, request, reply);
  }

 private:
  RequestTypes* types_;
  std::map<net::RequestType, Handler> handlers_;
};

}  // namespace tessera::net

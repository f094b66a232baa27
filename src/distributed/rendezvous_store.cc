#include "distributed/rendezvous_store.h"

#include <fmt/format.h>

#include "io/text.h"
#include "net/transport.h"
#include "tessera/base/error.h"

namespace tessera::distributed {

using net::MessageType;

RendezvousStore::RendezvousStore(const std::string& endpoint, const net::Security& security)
    : socket_(std::make_unique<net::ServerSocket>(endpoint, "the rendezvous store", security)),
      thread_([this] { serve(); }) {}

RendezvousStore::~RendezvousStore() {
  stop_ = true;
  thread_.join();
}

void RendezvousStore::serve() {
  net::Request request;
  while (!stop_) {
    try {
      if (!socket_->receive(&request, 100)) continue;
      handle(request);
    } catch (const std::exception& e) {
      try {
        socket_->reply_error(request, fmt::format("the rendezvous store: {}", describe(e)));
      } catch (const std::exception&) {
        // The client is gone; the store serves the others.
      }
    }
  }
}

void RendezvousStore::handle(net::Request& request) {
  const auto type = static_cast<MessageType>(request.header.type);
  net::Header reply;
  std::vector<zmq::message_t> frames;
  if (type == MessageType::kStoreCount) {
    reply.iarg = static_cast<int64_t>(values_.size());
    socket_->reply(request, reply, std::move(frames));
    return;
  }
  const size_t expected = type == MessageType::kStoreSet ? 2 : 1;
  if (type < MessageType::kStoreSet || type > MessageType::kStoreCount || request.frames.size() != expected)
    fail("request type {} with {} frames is not a store request", request.header.type, request.frames.size());
  const std::string key = request.frames[0].to_string();
  const auto found = values_.find(key);
  switch (type) {
    case MessageType::kStoreSet:
      values_[key] = request.frames[1].to_string();
      break;
    case MessageType::kStoreGet:
      reply.iarg = found != values_.end();
      if (found != values_.end()) frames.push_back(net::frame_of(found->second));
      break;
    case MessageType::kStoreAdd: {
      const int64_t now = (found == values_.end() ? 0 : parse_int(found->second, "store key " + key, "counter")) +
                          request.header.iarg;
      values_[key] = std::to_string(now);
      reply.iarg = now;
      break;
    }
    case MessageType::kStoreCheck:
      reply.iarg = found != values_.end();
      break;
    case MessageType::kStoreDelete:
      reply.iarg = found != values_.end();
      if (found != values_.end()) values_.erase(found);
      break;
    default:
      break;
  }
  socket_->reply(request, reply, std::move(frames));
}

}  // namespace tessera::distributed

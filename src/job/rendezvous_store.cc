#include "job/rendezvous_store.h"

#include <fmt/format.h>

#include "io/text.h"
#include "net/transport.h"
#include "net/service_registry.h"
#include "tessera/base/error.h"

namespace tessera::job {

net::ServiceRegistry<StoreValues>& store_services() {
  static net::ServiceRegistry<StoreValues> registry;
  return registry;
}

namespace {

using net::Frames;

// The request's key; a set carries its value as a second frame.
std::string key_of(const net::Request& request, size_t frames) {
  if (request.frames.size() != frames)
    throw net::ProtocolError(fmt::format("store request type {} needs {} frames, got {}", request.header.type, frames,
                                         request.frames.size()));
  return request.frames[0].to_string();
}

Frames serve_set(StoreValues& values, net::Request& request, net::Header*) {
  // The key first: it checks the frame count (in `a = b`, b is evaluated first).
  const std::string key = key_of(request, 2);
  values[key] = request.frames[1].to_string();
  return {};
}

Frames serve_get(StoreValues& values, net::Request& request, net::Header* reply) {
  const auto found = values.find(key_of(request, 1));
  reply->iarg = found != values.end();
  Frames frames;
  if (found != values.end()) frames.push_back(net::frame_of(found->second));
  return frames;
}

Frames serve_add(StoreValues& values, net::Request& request, net::Header* reply) {
  const std::string key = key_of(request, 1);
  const auto found = values.find(key);
  const int64_t was = found == values.end() ? 0 : parse_int(found->second, "store key " + key, "counter");
  int64_t now = 0;
  if (__builtin_add_overflow(was, request.header.iarg, &now))
    throw net::ProtocolError(fmt::format("store key {}: adding {} to {} overflows a 64-bit counter", key,
                                         request.header.iarg, was));
  values[key] = std::to_string(now);
  reply->iarg = now;
  return {};
}

Frames serve_check(StoreValues& values, net::Request& request, net::Header* reply) {
  reply->iarg = values.count(key_of(request, 1)) != 0;
  return {};
}

Frames serve_delete(StoreValues& values, net::Request& request, net::Header* reply) {
  reply->iarg = values.erase(key_of(request, 1)) != 0;
  return {};
}

Frames serve_count(StoreValues& values, net::Request&, net::Header* reply) {
  reply->iarg = static_cast<int64_t>(values.size());
  return {};
}

[[maybe_unused]] const bool kRendezvousServices =
    store_services().add(kStoreSet, "rendezvous: set", serve_set) &&
    store_services().add(kStoreGet, "rendezvous: get", serve_get) &&
    store_services().add(kStoreAdd, "rendezvous: add", serve_add) &&
    store_services().add(kStoreCheck, "rendezvous: check", serve_check) &&
    store_services().add(kStoreDelete, "rendezvous: delete", serve_delete) &&
    store_services().add(kStoreCount, "rendezvous: count", serve_count);

}  // namespace

RendezvousStore::RendezvousStore(const std::string& endpoint, const net::Security& security, int peer_timeout_s)
    : socket_(std::make_unique<net::ServerSocket>(endpoint, "the rendezvous store", security, peer_timeout_s)),
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
      net::Header reply;
      Frames frames = store_services().dispatch(values_, request, &reply);
      socket_->reply(request, reply, std::move(frames));
    } catch (const std::exception& e) {
      try {
        socket_->reply_error(request, fmt::format("the rendezvous store: {}", describe(e)));
      } catch (const std::exception&) {
        // The client is gone; the store serves the others.
      }
    }
  }
}

}  // namespace tessera::job

#include "job/rendezvous.h"

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "job/rendezvous_store.h"
#include "net/transport.h"
#include "tessera/base/error.h"

namespace tessera::job {

struct Rendezvous::Answer {
  int64_t iarg = 0;
  std::string value;
};

Rendezvous::Rendezvous(const std::string& addr, int port, bool host, int timeout_s, const net::Security& security)
    : where_(fmt::format("{}:{}", addr, port)), timeout_s_(timeout_s), security_(security) {
  const std::string endpoint = fmt::format("tcp://{}:{}", addr, port);
  if (host) store_ = std::make_unique<RendezvousStore>(endpoint, security, timeout_s);
  // The store may start after this process: requests wait in ZeroMQ's queue
  // until it listens, up to the timeout.
  client_ = std::make_unique<net::Client>(
      std::vector<net::ServerAddress>{{"the rendezvous store (machine 0's main server)", endpoint}}, timeout_s, security,
      timeout_s);
  try {
    client_->wait({client_->send(0, net::make_header(kStoreCount, 0, ""), {})});
  } catch (const PeerError& e) {
    fail_peer("cannot reach the rendezvous store at {} within {} s (is machine 0's main server running?): {}", where_,
              timeout_s, e.what());
  }
}

Rendezvous::~Rendezvous() {
  client_.reset();  // before the store it talks to
  store_.reset();
}

Rendezvous::Answer Rendezvous::call(net::RequestType type, const std::string& key, const std::string* value, int64_t iarg,
                                    const char* what) {
  std::vector<zmq::message_t> frames;
  if (type != kStoreCount) frames.push_back(net::frame_of(key));
  if (value != nullptr) frames.push_back(net::frame_of(*value));
  net::Header header = net::make_header(type, 0, "");
  header.iarg = iarg;
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    std::vector<net::Reply> replies = client_->wait({client_->send(0, header, std::move(frames))});
    Answer answer;
    answer.iarg = replies[0].header.iarg;
    if (!replies[0].frames.empty()) answer.value = replies[0].frames[0].to_string();
    return answer;
  } catch (const PeerError& e) {
    fail_peer("rendezvous store {}: cannot {} '{}': {}", where_, what, key, e.what());
  }
}

void Rendezvous::set(const std::string& key, const std::string& value) {
  call(kStoreSet, key, &value, 0, "set");
}

std::optional<std::string> Rendezvous::try_get(const std::string& key) {
  Answer answer = call(kStoreGet, key, nullptr, 0, "read");
  if (answer.iarg == 0) return std::nullopt;
  return std::move(answer.value);
}

std::string Rendezvous::get(const std::string& key) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s_);
  while (true) {
    if (std::optional<std::string> value = try_get(key)) return *value;
    if (std::chrono::steady_clock::now() > deadline)
      fail_peer("rendezvous store {}: no value for '{}' within {} s (a peer did not start)", where_, key, timeout_s_);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool Rendezvous::check(const std::string& key) {
  return call(kStoreCheck, key, nullptr, 0, "check").iarg != 0;
}

int64_t Rendezvous::add(const std::string& key, int64_t delta) {
  return call(kStoreAdd, key, nullptr, delta, "add to").iarg;
}

bool Rendezvous::remove(const std::string& key) {
  return call(kStoreDelete, key, nullptr, 0, "delete").iarg != 0;
}

int64_t Rendezvous::num_keys() { return call(kStoreCount, "", nullptr, 0, "count").iarg; }

void Rendezvous::wait_count(const std::string& key, int64_t target) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s_);
  int64_t now = 0;
  while ((now = add(key, 0)) < target) {
    if (std::chrono::steady_clock::now() > deadline)
      fail_peer("rendezvous store {}: '{}' reached {} of {} within {} s (a peer did not start)", where_, key, now,
                target, timeout_s_);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace tessera::job

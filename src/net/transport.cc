#include "net/transport.h"

#include <cerrno>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <numeric>

#include <fmt/format.h>

#include "tessera/base/error.h"

namespace tessera::net {
namespace {

// Heartbeats every second; a peer that answers none for the job's timeout
// (peer_timeout_s) is treated as gone: that covers hosts that vanish or stop
// without closing their connections, while a link that is down for less
// than the timeout is ridden through (TCP keeps the connection meanwhile).
constexpr int kHeartbeatIntervalMs = 1000;

// Monitor events after which a server is lost to this client. A refused or
// dropped connection attempt is not among them: libzmq retries it, so a
// server may start after its clients.
constexpr int kFatalEvents = ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

// A monitor event's first frame: its id (16 bits), then its value (32 bits): the connection's descriptor for
// ACCEPTED and DISCONNECTED (HANDSHAKE_SUCCEEDED carries 0). {0, 0} for a frame too short to be one.
struct MonitorEvent {
  uint16_t id = 0;
  uint32_t value = 0;
};

MonitorEvent decode_event(const std::vector<zmq::message_t>& event) {
  MonitorEvent e;
  if (event.empty() || event[0].size() < sizeof e.id + sizeof e.value) return e;
  std::memcpy(&e.id, event[0].data(), sizeof e.id);
  std::memcpy(&e.value, static_cast<const char*>(event[0].data()) + sizeof e.id, sizeof e.value);
  return e;
}

std::string why_dead(const std::vector<zmq::message_t>& event, int peer_timeout_s) {
  switch (decode_event(event).id) {
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      return "refused this process's key: it is not the job's (check TESSERA_KEY_FILE)";
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
      return "failed the security handshake (a server of another job on this port, or --insecure on one side "
             "only?)";
    default:
      // libzmq reports a closed connection and expired heartbeats alike.
      return fmt::format("is gone: its connection closed, or its host answered no heartbeat for {} s (died, stopped "
                         "or unreachable: see that server's log, and the network)",
                         peer_timeout_s);
  }
}

template <typename T>
void free_owned(void* /*data*/, void* hint) { delete static_cast<T*>(hint); }

// A received payload frame, moved to 8-byte-aligned memory if it is not
// there: libzmq hands small frames at any offset of its receive buffer, and
// the services and the client read frames in place as int64 or float arrays
// (a misaligned load is undefined behaviour; UBSan stops the process on it).
zmq::message_t aligned(zmq::message_t&& frame) {
  if (frame.size() == 0 || reinterpret_cast<uintptr_t>(frame.data()) % alignof(int64_t) == 0) return std::move(frame);
  auto* owned = new std::vector<int64_t>((frame.size() + sizeof(int64_t) - 1) / sizeof(int64_t));
  std::memcpy(owned->data(), frame.data(), frame.size());
  return zmq::message_t(owned->data(), frame.size(), &free_owned<std::vector<int64_t>>, owned);
}

void configure(zmq::socket_t& socket, int peer_timeout_s) {
  if (peer_timeout_s < 1) fail("internal: a peer timeout of {} s", peer_timeout_s);
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::sndhwm, 0);  // never drop or block on queued replies
  socket.set(zmq::sockopt::rcvhwm, 0);
  socket.set(zmq::sockopt::heartbeat_ivl, kHeartbeatIntervalMs);
  socket.set(zmq::sockopt::heartbeat_timeout, peer_timeout_s * 1000);
}

}  // namespace

zmq::context_t& zmq_context() {
  static zmq::context_t* context = new zmq::context_t(1);  // leaked: sockets may outlive statics
  return *context;
}

template <typename T>
zmq::message_t frame_of_vector(std::vector<T>&& values) {
  auto* owned = new std::vector<T>(std::move(values));
  return zmq::message_t(owned->data(), owned->size() * sizeof(T), &free_owned<std::vector<T>>, owned);
}

zmq::message_t frame_of(std::vector<int64_t>&& values) { return frame_of_vector(std::move(values)); }
zmq::message_t frame_of(std::vector<int32_t>&& values) { return frame_of_vector(std::move(values)); }

zmq::message_t frame_of(const Array& array) {
  auto* owned = new Array(array);
  return zmq::message_t(owned->mutable_raw(), owned->nbytes(), &free_owned<Array>, owned);
}

zmq::message_t frame_of(const std::string& text) { return zmq::message_t(text.data(), text.size()); }

Array array_of(zmq::message_t&& frame, DType dtype, std::vector<int64_t> shape) {
  const int64_t row_elems = std::accumulate(shape.begin() + 1, shape.end(), int64_t{1}, std::multiplies<>());
  check_frame(frame.size(), dtype, shape.at(0), row_elems, "received");
  auto owned = std::make_shared<zmq::message_t>(std::move(frame));
  const void* data = owned->data();
  if (reinterpret_cast<uintptr_t>(data) % 8 == 0)
    return Array::wrap(dtype, std::move(shape), data, std::shared_ptr<const void>(owned, data));
  Array copy = Array::uninitialized(dtype, std::move(shape));
  std::memcpy(copy.mutable_raw(), data, copy.nbytes());
  return copy;
}

// ---------------------------------------------------------------- server

ServerSocket::ServerSocket(const std::string& endpoint, const std::string& who, const Security& security,
                           int peer_timeout_s)
    : socket_(zmq_context(), zmq::socket_type::router), monitor_(zmq_context(), zmq::socket_type::pair), who_(who) {
  configure(socket_, peer_timeout_s);
  socket_.set(zmq::sockopt::maxmsgsize, 2 * kMaxRequestBytes);
  secure_server(socket_, security, who);
  static std::atomic<uint64_t> instances{0};
  const std::string monitor_endpoint =
      fmt::format("inproc://tessera-server-monitor-{}-{}", ::getpid(), instances.fetch_add(1));
  if (zmq_socket_monitor(static_cast<void*>(socket_), monitor_endpoint.c_str(),
                         ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED) != 0)
    fail("{} cannot monitor its connections: {}", who, zmq_strerror(zmq_errno()));
  monitor_.set(zmq::sockopt::linger, 0);
  monitor_.connect(monitor_endpoint);
  try {
    socket_.bind(endpoint);
  } catch (const zmq::error_t& e) {
    fail("{} cannot listen on {}: {}{}", who, endpoint, e.what(),
         e.num() == EADDRINUSE ? " (another process holds the port; pick another base port in ip_config)" : "");
  }
}

ServerSocket::~ServerSocket() { zmq_socket_monitor(static_cast<void*>(socket_), nullptr, 0); }

void ServerSocket::watch_clients() {
  while (true) {
    std::vector<zmq::message_t> event;
    if (!zmq::recv_multipart(monitor_, std::back_inserter(event), zmq::recv_flags::dontwait)) return;
    const auto [id, fd] = decode_event(event);
    if (id == ZMQ_EVENT_ACCEPTED) {
      connections_.insert(static_cast<int>(fd));
    } else if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
      had_client_ = true;  // a process of the job, not a stray connection
    } else if (id == ZMQ_EVENT_DISCONNECTED && connections_.erase(static_cast<int>(fd)) == 1 &&
               connections_.empty()) {
      alone_since_ = std::chrono::steady_clock::now();
    }
  }
}

double ServerSocket::seconds_alone() const {
  if (!had_client_ || !connections_.empty()) return 0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - alone_since_).count();
}

bool ServerSocket::receive(Request* request, int timeout_ms) {
  zmq::pollitem_t item{static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
  while (true) {
    watch_clients();
    drain();
    if (!queued_.empty()) {
      *request = std::move(queued_.front());
      queued_.pop_front();
      const auto client = queued_per_client_.find(request->identity.to_string());
      if (--client->second == 0) queued_per_client_.erase(client);
      return true;
    }
    try {
      if (zmq::poll(&item, 1, std::chrono::milliseconds(timeout_ms)) == 0) return false;
    } catch (const zmq::error_t& e) {
      // A signal (SIGTERM from the launcher) interrupted the wait: the
      // caller's loop checks its stop flag.
      if (e.num() == EINTR) return false;
      throw;
    }
  }
}

void ServerSocket::drain() {
  // Bounded, so that a flood of requests cannot keep the server from serving.
  for (int n = 0; n < kMaxQueuedPerClient; ++n) {
    Request request;
    if (!read_one(&request)) return;
    if (request.header.type == 0) continue;  // malformed: already answered
    int& queued = queued_per_client_[request.identity.to_string()];
    if (queued >= kMaxQueuedPerClient) {
      reply_error(request, fmt::format("{}: refused: {} requests of this client are already waiting", who_, queued));
      continue;
    }
    ++queued;
    queued_.push_back(std::move(request));
  }
}

bool ServerSocket::read_one(Request* request) {
  zmq::message_t identity;
  if (!socket_.recv(identity, zmq::recv_flags::dontwait)) return false;
  // The rest of a multipart message has arrived with its first part. Keep at
  // most what a valid request has; count the rest and let it go.
  std::vector<zmq::message_t> parts;
  size_t count = 0;
  int64_t bytes = 0;
  for (bool more = identity.more(); more;) {
    zmq::message_t part;
    (void)socket_.recv(part, zmq::recv_flags::none);
    more = part.more();
    ++count;
    bytes += static_cast<int64_t>(part.size());
    if (parts.size() < 1 + kMaxFrames) parts.push_back(std::move(part));
  }
  request->identity = std::move(identity);
  request->frames.clear();
  try {
    // ROUTER prepends the identity; a DEALER adds no empty delimiter.
    if (count == 0) throw ProtocolError("message has no header frame");
    if (count - 1 > kMaxFrames)
      throw ProtocolError(fmt::format("{} payload frames; at most {} are accepted", count - 1, kMaxFrames));
    if (bytes > kMaxRequestBytes)
      throw ProtocolError(fmt::format("{} bytes; at most {} are accepted", bytes, kMaxRequestBytes));
    request->header = decode_header(parts[0].data(), parts[0].size(), count - 1);
    for (size_t i = 1; i < parts.size(); ++i) request->frames.push_back(aligned(std::move(parts[i])));
  } catch (const ProtocolError& e) {
    ++malformed_;
    request->header = Header{};
    if (!parts.empty() && parts[0].size() >= 16) std::memcpy(&request->header.request_id, parts[0].data<char>() + 8, 8);
    reply_error(*request, fmt::format("{}: malformed request: {}", who_, e.what()));
    request->header.type = 0;
  }
  return true;
}

void ServerSocket::reply(Request& request, Header header, std::vector<zmq::message_t> frames) {
  header.type = kReply;
  header.request_id = request.header.request_id;
  header.num_frames = static_cast<uint16_t>(frames.size());
  socket_.send(request.identity, zmq::send_flags::sndmore);
  socket_.send(zmq::buffer(&header, sizeof header), frames.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore);
  for (size_t i = 0; i < frames.size(); ++i)
    socket_.send(frames[i], i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
}

void ServerSocket::reply_error(Request& request, const std::string& text) {
  Header header;
  header.status = 1;
  std::vector<zmq::message_t> frames;
  frames.push_back(frame_of(text));
  reply(request, header, std::move(frames));
}

// ---------------------------------------------------------------- client

Client::Client(std::vector<ServerAddress> servers, int request_timeout_s, const Security& security,
               int peer_timeout_s)
    : servers_(std::move(servers)), dead_(servers_.size()), request_timeout_s_(request_timeout_s),
      peer_timeout_s_(peer_timeout_s) {
  // Clients are made on several threads at once (a loader's samplers, a
  // collate thread): each takes its own number, or two could name the same
  // monitor endpoint and one would fail with "Address already in use".
  static std::atomic<uint64_t> instances{0};
  const uint64_t instance = instances.fetch_add(1);
  for (size_t i = 0; i < servers_.size(); ++i) {
    zmq::socket_t socket(zmq_context(), zmq::socket_type::dealer);
    configure(socket, peer_timeout_s);
    secure_client(socket, security);
    // Watch the connection: a server process that dies closes it at once; a
    // server that refuses this process's key fails the handshake.
    const std::string monitor_endpoint = fmt::format("inproc://tessera-monitor-{}-{}-{}", ::getpid(), instance, i);
    if (zmq_socket_monitor(static_cast<void*>(socket), monitor_endpoint.c_str(),
                           kFatalEvents) != 0)
      fail("cannot monitor the connection to {}: {}", servers_[i].label, zmq_strerror(zmq_errno()));
    zmq::socket_t monitor(zmq_context(), zmq::socket_type::pair);
    monitor.set(zmq::sockopt::linger, 0);
    monitor.connect(monitor_endpoint);
    try {
      socket.connect(servers_[i].endpoint);
    } catch (const zmq::error_t& e) {
      fail_peer("cannot connect to {} at {}: {}", servers_[i].label, servers_[i].endpoint, e.what());
    }
    sockets_.push_back(std::move(socket));
    monitors_.push_back(std::move(monitor));
  }
}

Client::~Client() {
  for (auto& socket : sockets_) zmq_socket_monitor(static_cast<void*>(socket), nullptr, 0);
}

void Client::check_alive(int server) const {
  if (!dead_[server].empty())
    fail_peer("server {} ({}) {}", servers_[server].label, servers_[server].endpoint, dead_[server]);
}

void Client::check_servers() {
  poll_once(0);
  for (int s = 0; s < num_servers(); ++s) check_alive(s);
}

uint64_t Client::send(int server, Header header, std::vector<zmq::message_t> frames) {
  check_alive(server);
  header.request_id = next_id_++;
  header.num_frames = static_cast<uint16_t>(frames.size());
  zmq::socket_t& socket = sockets_.at(server);
  socket.send(zmq::buffer(&header, sizeof header), frames.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore);
  for (size_t i = 0; i < frames.size(); ++i)
    socket.send(frames[i], i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  pending_[header.request_id] = server;
  return header.request_id;
}

void Client::poll_once(int timeout_ms) {
  const size_t n = sockets_.size();
  std::vector<zmq::pollitem_t> items;
  items.reserve(2 * n);
  for (auto& s : sockets_) items.push_back({static_cast<void*>(s), 0, ZMQ_POLLIN, 0});
  for (auto& m : monitors_) items.push_back({static_cast<void*>(m), 0, ZMQ_POLLIN, 0});
  zmq::poll(items.data(), items.size(), std::chrono::milliseconds(timeout_ms));
  for (size_t i = 0; i < n; ++i) {
    if (items[n + i].revents & ZMQ_POLLIN) {
      std::vector<zmq::message_t> event;
      (void)zmq::recv_multipart(monitors_[i], std::back_inserter(event), zmq::recv_flags::dontwait);
      dead_[i] = why_dead(event, peer_timeout_s_);
    }
    if (!(items[i].revents & ZMQ_POLLIN)) continue;
    while (true) {
      std::vector<zmq::message_t> parts;
      if (!zmq::recv_multipart(sockets_[i], std::back_inserter(parts), zmq::recv_flags::dontwait)) break;
      Reply reply;
      try {
        reply.header = decode_header(parts.at(0).data(), parts[0].size(), parts.size() - 1);
      } catch (const std::exception& e) {
        fail("bad reply from {}: {}", servers_[i].label, e.what());
      }
      for (size_t k = 1; k < parts.size(); ++k) reply.frames.push_back(aligned(std::move(parts[k])));
      const uint64_t id = reply.header.request_id;
      if (reply.header.status != 0 && pending_.count(id) == 0) {
        // An error about a request we cannot match: report it rather than drop it.
        fail("{} reported: {}", servers_[i].label, reply.frames.empty() ? "error" : reply.frames[0].to_string());
      }
      arrived_[id] = std::move(reply);
    }
  }
}

std::vector<Reply> Client::wait(const std::vector<uint64_t>& ids) {
  std::vector<Reply> replies;
  replies.reserve(ids.size());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(request_timeout_s_);
  for (uint64_t id : ids) {
    const auto pending = pending_.find(id);
    if (pending == pending_.end()) fail("internal: no request {} is pending", id);
    const int server = pending->second;
    while (arrived_.count(id) == 0) {
      // The job cannot go on without any of its servers: fail on the first
      // death seen, not only that of the server this reply comes from.
      for (int s = 0; s < num_servers(); ++s) check_alive(s);
      if (std::chrono::steady_clock::now() > deadline)
        fail_peer("server {} ({}) did not answer within {} s", servers_[server].label, servers_[server].endpoint,
             request_timeout_s_);
      poll_once(200);
    }
    pending_.erase(pending);
    Reply reply = std::move(arrived_[id]);
    arrived_.erase(id);
    if (reply.header.status != 0)
      fail("{}", reply.frames.empty() ? servers_[server].label + " failed" : reply.frames[0].to_string());
    replies.push_back(std::move(reply));
  }
  return replies;
}

void Client::send_farewell(RequestType farewell) {
  std::vector<uint64_t> ids;
  for (int i = 0; i < num_servers(); ++i) ids.push_back(send(i, make_header(farewell, 0, ""), {}));
  // A server acknowledges by its reply or by closing its connection. The two
  // reach us through different ZeroMQ pipes, so the close may be seen before
  // the reply that preceded it; either way the server is going, as asked.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(request_timeout_s_);
  for (uint64_t id : ids) {
    const int server = pending_.at(id);
    while (arrived_.count(id) == 0 && dead_[server].empty()) {
      if (std::chrono::steady_clock::now() > deadline)
        fail_peer("server {} ({}) did not acknowledge its farewell within {} s", servers_[server].label,
                  servers_[server].endpoint, request_timeout_s_);
      poll_once(200);
    }
    pending_.erase(id);
    const auto reply = arrived_.find(id);
    if (reply == arrived_.end()) continue;
    if (reply->second.header.status != 0)
      fail("{}", reply->second.frames.empty() ? servers_[server].label + " failed" : reply->second.frames[0].to_string());
    arrived_.erase(reply);
  }
}

}  // namespace tessera::net

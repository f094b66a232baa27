// ZeroMQ transport. A server binds one ROUTER socket and answers requests in
// order; a client holds one DEALER socket per server, so requests to several
// servers go out together and their replies are awaited together. Payload
// frames are handed to ZeroMQ without copies; a client notices a server whose
// connection dropped (process died, host gone) and fails fast with its name.
// Every socket is secured (net/security.h): CURVE, or PLAIN under --insecure.
// Received payload frames (Request::frames, Reply::frames) start 8-byte
// aligned, so they may be read in place as int64 or float arrays.
//
// What one client may ask of a server is bounded, so that a bad or hostile
// peer cannot exhaust it: a request over kMaxRequestBytes or with more than
// kMaxFrames payload frames, or beyond kMaxQueuedPerClient of the client's
// requests waiting to be served, gets an error reply and is dropped; the
// server goes on serving. (A single frame over twice kMaxRequestBytes is cut
// off by libzmq itself, which closes that connection.)
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "tessera/base/array.h"
#include "net/message.h"
#include "net/security.h"

namespace tessera::net {

constexpr int64_t kMaxRequestBytes = int64_t{1} << 30;
constexpr int kMaxQueuedPerClient = 1024;

// One process-wide ZeroMQ context.
zmq::context_t& zmq_context();

// Frames that own their bytes until ZeroMQ has sent them (no copy).
zmq::message_t frame_of(std::vector<int64_t>&& values);
zmq::message_t frame_of(std::vector<int32_t>&& values);
zmq::message_t frame_of(const Array& array);  // keeps the array's memory alive
zmq::message_t frame_of(const std::string& text);
// The inverse for a received frame of exactly `shape`'s bytes (shape[0]
// rows; check_frame's error otherwise): the Array keeps the frame alive and
// uses its bytes in place, unless they are not 8-byte aligned (small frames
// can sit at any offset of ZeroMQ's receive buffer); then it copies them.
Array array_of(zmq::message_t&& frame, DType dtype, std::vector<int64_t> shape);

struct Request {
  zmq::message_t identity;  // the client's routing id
  Header header;
  std::vector<zmq::message_t> frames;
};

class ServerSocket {
 public:
  // Binds `endpoint` ("tcp://IP:PORT"); `who` names the process in errors.
  // A client that answers no heartbeat for `peer_timeout_s` (the job's
  // timeout) is disconnected.
  ServerSocket(const std::string& endpoint, const std::string& who, const Security& security, int peer_timeout_s);
  ~ServerSocket();

  // Waits up to `timeout_ms` for a well-formed request. Malformed messages
  // are answered with an error reply here and never returned.
  bool receive(Request* request, int timeout_ms);
  void reply(Request& request, Header header, std::vector<zmq::message_t> frames);
  void reply_error(Request& request, const std::string& text);

  uint64_t malformed_count() const { return malformed_; }

  // Seconds since this socket's last client connection closed or answered no
  // heartbeat for the peer timeout, while none is connected; 0 while one is,
  // and before the first. A server alone for long has lost its job: its
  // clients died, or their hosts stopped or became unreachable.
  double seconds_alone() const;

 private:
  // Moves the requests waiting in the socket into queued_, refusing those
  // over the limits above.
  void drain();
  bool read_one(Request* request);
  void watch_clients();  // reads the monitor's connection events

  zmq::socket_t socket_;
  zmq::socket_t monitor_;
  std::set<int> connections_;  // open, by descriptor
  bool had_client_ = false;    // a connection has passed the security handshake
  std::chrono::steady_clock::time_point alone_since_;
  std::string who_;
  uint64_t malformed_ = 0;
  std::deque<Request> queued_;
  std::map<std::string, int> queued_per_client_;  // by routing id
};

struct ServerAddress {
  std::string label;     // "m0/server/1"
  std::string endpoint;  // "tcp://127.0.0.1:30052"
};

struct Reply {
  Header header;
  std::vector<zmq::message_t> frames;
};

class Client {
 public:
  // `request_timeout_s`: longest wait for one reply from a live server.
  // Servers may start after the client: a connection refused is retried;
  // one that closes after its handshake, or a handshake refused, is fatal,
  // and so is a server that answers no heartbeat for `peer_timeout_s` (the
  // job's timeout: a shorter network outage is ridden through).
  Client(std::vector<ServerAddress> servers, int request_timeout_s, const Security& security, int peer_timeout_s);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  int num_servers() const { return static_cast<int>(servers_.size()); }
  const ServerAddress& server(int i) const { return servers_.at(i); }

  // Sends a request; the header's request id is assigned here and returned.
  uint64_t send(int server, Header header, std::vector<zmq::message_t> frames);
  // Waits for the replies of `ids` (in that order). An error reply, a dead
  // server or a timeout throws tessera::Error naming the server.
  std::vector<Reply> wait(const std::vector<uint64_t>& ids);
  // Throws the error of a server whose connection is lost, as wait() would;
  // takes what has arrived, waits for nothing. For a thread waiting on
  // something other than a reply (a row lock a dead server may hold).
  void check_servers();
  // Sends every server a request of type `farewell`, one the servers answer
  // by going away, and waits for each to acknowledge; from here
  // on their connections closing is expected, not an error.
  void send_farewell(RequestType farewell);

 private:
  void poll_once(int timeout_ms);
  void check_alive(int server) const;

  std::vector<ServerAddress> servers_;
  std::vector<zmq::socket_t> sockets_;
  std::vector<zmq::socket_t> monitors_;
  std::vector<std::string> dead_;  // why each server is gone; empty: alive
  std::map<uint64_t, int> pending_;  // request id -> server
  std::map<uint64_t, Reply> arrived_;
  uint64_t next_id_ = 1;
  int request_timeout_s_;
  int peer_timeout_s_;
};

}  // namespace tessera::net

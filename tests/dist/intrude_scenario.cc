// A foreign process against a running job (see scenarios.h).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "distributed/piece_cipher.h"
#include "net/security.h"
#include "job/rendezvous_store.h"
#include "net/transport.h"
#include "server/partition_server.h"
#include "server/store_service.h"
#include "scenarios.h"

namespace {

using RequestType = tessera::net::RequestType;
using tessera::job::kStoreSet;
using tessera::server::kPull;
using tessera::server::kPush;
using tessera::server::kShutdown;

// ZMTP 3: the peer's greeting names its security mechanism in bytes 12..31.
std::string greeting_mechanism(const std::string& endpoint) {
  const std::string hostport = endpoint.substr(6);
  const std::string host = hostport.substr(0, hostport.find(':'));
  const int port = std::stoi(hostport.substr(hostport.find(':') + 1));
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  timeval timeout{3, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "(cannot connect)";
  }
  // Our signature and version: the peer sends its whole greeting only then.
  const unsigned char hello[11] = {0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3};
  (void)!::write(fd, hello, sizeof hello);
  unsigned char greeting[64];
  size_t got = 0;
  while (got < sizeof greeting) {
    const ssize_t n = ::read(fd, greeting + got, sizeof greeting - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got < 32) return "(no greeting)";
  return std::string(reinterpret_cast<const char*>(greeting + 12), strnlen(reinterpret_cast<const char*>(greeting + 12), 20));
}

// One request on a fresh connection; true when anything came back.
enum class Credentials { kNone, kOwnCurveKey, kWrongToken };

const char* name_of(Credentials c) {
  return c == Credentials::kNone ? "no key" : c == Credentials::kOwnCurveKey ? "another key" : "a wrong PLAIN token";
}

bool answered(const std::string& endpoint, Credentials credentials, const std::string& server_key, RequestType type) {
  zmq::socket_t socket(tessera::net::zmq_context(), zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  if (credentials == Credentials::kWrongToken) {
    socket.set(zmq::sockopt::plain_username, "tessera");
    socket.set(zmq::sockopt::plain_password, tessera::net::generate_job_keys().token);
  } else if (credentials == Credentials::kOwnCurveKey) {
    const tessera::net::JobKeys own = tessera::net::generate_job_keys();
    socket.set(zmq::sockopt::curve_serverkey, server_key);
    socket.set(zmq::sockopt::curve_publickey, own.public_key);
    socket.set(zmq::sockopt::curve_secretkey, own.secret_key);
  }
  socket.connect(endpoint);
  tessera::net::Header h = tessera::net::make_header(type, 1, "node/_N/feat");
  std::vector<zmq::message_t> frames;
  if (type == kPull || type == kPush) {
    tessera::net::set_shape(&h, tessera::DType::kInt64, {1});
    frames.emplace_back(8);
    std::memset(frames.back().data(), 0, 8);
    if (type == kPush) frames.emplace_back(64);
  } else if (type == kStoreSet) {
    frames.emplace_back(std::string("servers_up"));
    frames.emplace_back(std::string("0"));
  }
  h.num_frames = static_cast<uint16_t>(frames.size());
  (void)socket.send(zmq::buffer(&h, sizeof h), frames.empty() ? zmq::send_flags::dontwait : zmq::send_flags::sndmore);
  for (size_t i = 0; i < frames.size(); ++i)
    (void)socket.send(frames[i], i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::dontwait);
  zmq::pollitem_t item{static_cast<void*>(socket), 0, ZMQ_POLLIN, 0};
  return zmq::poll(&item, 1, std::chrono::milliseconds(3000)) != 0;
}

// A port that greets with NULL is a trainer's collectives (the secured
// ring seals each piece itself): push it a piece headed as the ring's are,
// sealed under a key of the intruder's own. The trainer must drop it.
void push_forged_piece(const std::string& endpoint) {
  zmq::socket_t socket(tessera::net::zmq_context(), zmq::socket_type::push);
  socket.set(zmq::sockopt::linger, 1000);
  socket.connect(endpoint);
  const tessera::distributed::PieceHeader header{1, 0, 64};
  std::vector<char> piece(sizeof header + header.bytes + tessera::distributed::kPieceTagBytes, 1);
  std::memcpy(piece.data(), &header, sizeof header);
  tessera::distributed::PieceCipher own(tessera::net::generate_job_keys().secret_key, "ring/0",
                                        tessera::distributed::PieceCipher::new_salt());
  const std::vector<char> values(header.bytes, 9);
  own.seal(header, values.data(), piece.data() + sizeof header);
  (void)socket.send(zmq::buffer(piece), zmq::send_flags::none);
  fmt::print("intruder: pushed a forged piece to {}\n", endpoint);
}

}  // namespace

int run_intrude(const std::map<std::string, std::string>& flags) {
  std::vector<std::string> endpoints;
  const std::string list = flags.at("--endpoints");
  for (size_t start = 0; start <= list.size();) {
    const size_t comma = std::min(list.find(',', start), list.size());
    endpoints.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  // A guess at the servers' public key: a stranger's (the job's is secret
  // to its processes; a leaked one is the ZAP handler's case, tested in the
  // garbage scenario).
  const std::string server_key = tessera::net::generate_job_keys().public_key;
  int not_curve = 0;
  struct Attempt {
    std::string endpoint;
    Credentials credentials;
    RequestType type;
    bool answered = false;
  };
  std::vector<Attempt> attempts;
  for (size_t e = 0; e < endpoints.size(); ++e) {
    const std::string mechanism = greeting_mechanism(endpoints[e]);
    fmt::print("intruder: {} greets with {}\n", endpoints[e], mechanism);
    not_curve += mechanism != "CURVE";
    if (mechanism == "NULL") push_forged_piece(endpoints[e]);
    const std::vector<RequestType> types =
        e == 0 ? std::vector<RequestType>{kStoreSet}
               : std::vector<RequestType>{kPull, kPush, kShutdown};
    for (const Credentials c : {Credentials::kNone, Credentials::kOwnCurveKey, Credentials::kWrongToken})
      for (RequestType type : types) attempts.push_back({endpoints[e], c, type});
  }
  // All at once: each waits for an answer that should never come.
  std::vector<std::thread> threads;
  for (Attempt& a : attempts)
    threads.emplace_back([&a, &server_key] { a.answered = answered(a.endpoint, a.credentials, server_key, a.type); });
  for (std::thread& t : threads) t.join();
  int refused = 0;
  for (const Attempt& a : attempts) {
    if (!a.answered) ++refused;
    else fmt::print("intruder: {} answered request type {} ({})\n", a.endpoint, static_cast<int>(a.type),
                    name_of(a.credentials));
  }
  fmt::print("intruder: {} attempts, {} refused; {} of {} ports greet without CURVE\n", attempts.size(), refused,
             not_curve, endpoints.size());
  return refused == static_cast<int>(attempts.size()) ? 0 : 1;
}

// dist_worker garbage: bad bytes and bad messages at a live server, which
// must answer or ignore them and keep serving this trainer correctly.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "job/job_security.h"
#include "job/rendezvous_store.h"
#include "sampling/sample_service.h"
#include "net/transport.h"
#include "scenarios.h"
#include "server/partition_server.h"
#include "server/store_service.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"
#include "tessera/distributed/dist_graph.h"
#include "tessera/sampling/dist_sampler.h"

namespace distributed = tessera::distributed;
using tessera::Array;
using tessera::DType;
using tessera::fail;

namespace {

std::string errno_text() { return std::strerror(errno); }

}  // namespace

int run_garbage(const std::map<std::string, std::string>&) {
  auto ctx = distributed::initialize();
  distributed::DistGraph g(*ctx);
  const tessera::net::ServerAddress& server = ctx->client().server(0);
  const std::string hostport = server.endpoint.substr(6);
  const std::string host = hostport.substr(0, hostport.find(':'));
  const int port = std::stoi(hostport.substr(hostport.find(':') + 1));
  // 1. Raw random bytes on a TCP connection (not even ZeroMQ's handshake).
  for (int round = 0; round < 3; ++round) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
    EXPECT_OR_FAIL(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0, "connect: {}", errno_text());
    tessera::Rng rng(round);
    std::vector<uint8_t> junk(4096);
    for (auto& b : junk) b = static_cast<uint8_t>(rng.next());
    (void)!::write(fd, junk.data(), junk.size());
    ::usleep(50 * 1000);
    ::close(fd);
  }
  // 2. Clients without the job's key: one with no security (ZeroMQ's NULL
  // mechanism), one with a key pair of its own that knows the server's
  // public key. Neither gets an answer.
  const tessera::net::Security job = tessera::job::job_security(ctx->env());
  for (const bool own_key : {false, true}) {
    zmq::socket_t intruder(tessera::net::zmq_context(), zmq::socket_type::dealer);
    intruder.set(zmq::sockopt::linger, 0);
    if (own_key) {
      const tessera::net::JobKeys own = tessera::net::generate_job_keys();
      intruder.set(zmq::sockopt::curve_serverkey, job.keys.public_key);
      intruder.set(zmq::sockopt::curve_publickey, own.public_key);
      intruder.set(zmq::sockopt::curve_secretkey, own.secret_key);
    }
    intruder.connect(server.endpoint);
    tessera::net::Header h = tessera::net::make_header(tessera::server::kShutdown, 9, "");
    (void)intruder.send(zmq::buffer(&h, sizeof h), zmq::send_flags::dontwait);
    zmq::pollitem_t item{static_cast<void*>(intruder), 0, ZMQ_POLLIN, 0};
    EXPECT_OR_FAIL(zmq::poll(&item, 1, std::chrono::milliseconds(1500)) == 0, "a client without the job's key got an answer");
    fmt::print("client without the job's key got no answer ({})\n", own_key ? "another key" : "no key");
  }
  // 3. Well-framed ZeroMQ messages with bad contents: each gets an error reply.
  zmq::socket_t dealer(tessera::net::zmq_context(), zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  tessera::net::secure_client(dealer, job);
  dealer.connect(server.endpoint);
  // The rendezvous store (machine 0's main server hosts it) takes requests too.
  zmq::socket_t store(tessera::net::zmq_context(), zmq::socket_type::dealer);
  store.set(zmq::sockopt::linger, 0);
  tessera::net::secure_client(store, job);
  store.connect(fmt::format("tcp://{}:{}", ctx->env().master_addr, ctx->env().master_port));
  auto reply_to = [&](zmq::socket_t& to, std::vector<zmq::message_t> parts, const char* what) {
    zmq::send_multipart(to, parts);
    zmq::pollitem_t item{static_cast<void*>(to), 0, ZMQ_POLLIN, 0};
    EXPECT_OR_FAIL(zmq::poll(&item, 1, std::chrono::milliseconds(5000)) == 1, "no reply to a bad message ({})", what);
    std::vector<zmq::message_t> reply;
    (void)zmq::recv_multipart(to, std::back_inserter(reply));
    return reply;
  };
  auto expect_error_from = [&](zmq::socket_t& to, std::vector<zmq::message_t> parts, const char* needle) {
    std::vector<zmq::message_t> reply = reply_to(to, std::move(parts), needle);
    tessera::net::Header h;
    std::memcpy(&h, reply.at(0).data(), sizeof h);
    const std::string text = reply.size() > 1 ? reply[1].to_string() : "";
    EXPECT_OR_FAIL(h.status != 0 && text.find(needle) != std::string::npos, "reply to bad message: '{}' (wanted '{}')",
                   text, needle);
    fmt::print("bad message answered: {}\n", text);
  };
  auto expect_error = [&](std::vector<zmq::message_t> parts, const char* needle) {
    expect_error_from(dealer, std::move(parts), needle);
  };
  {
    std::vector<zmq::message_t> parts;
    parts.emplace_back(std::string("hello, not a header"));
    expect_error(std::move(parts), "header frame has");
  }
  {
    tessera::net::Header h = tessera::net::make_header(tessera::server::kPull, 1, "node/_N/feat");
    h.magic = 0xdeadbeef;
    std::vector<zmq::message_t> parts;
    parts.emplace_back(&h, sizeof h);
    expect_error(std::move(parts), "bad magic");
  }
  {
    tessera::net::Header h = tessera::net::make_header(tessera::server::kPull, 2, "node/_N/feat");
    tessera::net::set_shape(&h, DType::kInt64, {1000000});  // claims far more ids than sent
    h.num_frames = 1;
    std::vector<zmq::message_t> parts;
    parts.emplace_back(&h, sizeof h);
    parts.emplace_back(std::string(16, '\0'));
    expect_error(std::move(parts), "ids frame has 16 bytes");
  }
  {
    tessera::net::Header h = tessera::net::make_header(tessera::server::kPull, 3, "node/_N/feat");
    tessera::net::set_shape(&h, DType::kInt64, {1});
    h.num_frames = 1;
    const int64_t out_of_range = int64_t{1} << 40;
    std::vector<zmq::message_t> parts;
    parts.emplace_back(&h, sizeof h);
    parts.emplace_back(&out_of_range, sizeof out_of_range);
    expect_error(std::move(parts), "out of range");
  }
  {
    tessera::net::Header h = tessera::net::make_header(tessera::server::kPull, 4, "no_such_tensor");
    tessera::net::set_shape(&h, DType::kInt64, {0});
    h.num_frames = 1;
    std::vector<zmq::message_t> parts;
    parts.emplace_back(&h, sizeof h);
    parts.emplace_back(0);
    expect_error(std::move(parts), "no tensor named");
  }
  {
    tessera::net::Header h = tessera::net::make_header(tessera::server::kPull, 5, "node/_N/feat");
    h.num_frames = 20;
    std::vector<zmq::message_t> parts;
    parts.emplace_back(&h, sizeof h);
    for (int i = 0; i < 20; ++i) parts.emplace_back(8);
    expect_error(std::move(parts), "20 payload frames; at most 8 are accepted");
  }
  {
    tessera::net::Header h = tessera::net::make_header(999, 6, "");
    std::vector<zmq::message_t> parts;
    parts.emplace_back(&h, sizeof h);
    expect_error(std::move(parts), "no service answers request type 999");
  }
  {
    // With replacement a seed draws its fanout whatever its degree: the
    // server refuses what it cannot allocate rather than trying.
    tessera::sampling::FanoutSpec spec;
    spec.fanout = int64_t{1} << 40;
    spec.replace = true;
    const std::vector<int64_t> seeds{0, 1}, encoded = tessera::sampling::encode_fanout(spec);
    tessera::net::Header h = tessera::net::make_header(tessera::sampling::kSample, 7, "");
    tessera::net::set_shape(&h, DType::kInt64, {2});
    h.num_frames = 2;
    std::vector<zmq::message_t> parts;
    parts.emplace_back(&h, sizeof h);
    parts.emplace_back(seeds.data(), seeds.size() * sizeof(int64_t));
    parts.emplace_back(encoded.data(), encoded.size() * sizeof(int64_t));
    expect_error(std::move(parts), "send fewer seeds per request");
  }
  {
    // A set without its value frame (the value was read before the count
    // was checked: the store crashed).
    tessera::net::Header h = tessera::net::make_header(tessera::job::kStoreSet, 8, "");
    h.num_frames = 1;
    std::vector<zmq::message_t> parts;
    parts.emplace_back(&h, sizeof h);
    parts.emplace_back(std::string("garbage/key"));
    expect_error_from(store, std::move(parts), "needs 2 frames, got 1");
  }
  {
    // A counter past int64's range.
    for (const int64_t delta : {std::numeric_limits<int64_t>::max(), int64_t{1}}) {
      tessera::net::Header h = tessera::net::make_header(tessera::job::kStoreAdd, 9, "");
      h.iarg = delta;
      h.num_frames = 1;
      std::vector<zmq::message_t> parts;
      parts.emplace_back(&h, sizeof h);
      parts.emplace_back(std::string("garbage/counter"));
      if (delta == 1) {
        expect_error_from(store, std::move(parts), "overflows a 64-bit counter");
      } else {
        const std::vector<zmq::message_t> reply = reply_to(store, std::move(parts), "add");
        tessera::net::Header r;
        std::memcpy(&r, reply.at(0).data(), sizeof r);
        EXPECT_OR_FAIL(r.status == 0 && r.iarg == delta, "store add of {} answered status {} iarg {}", delta, r.status,
                       r.iarg);
      }
    }
  }
  // 4. The server still serves correct requests.
  std::vector<int64_t> ids(g.num_nodes());
  std::iota(ids.begin(), ids.end(), 0);
  const Array rows = g.ndata("feat").pull(ids);
  EXPECT_OR_FAIL(rows.rows() == g.num_nodes(), "pull after garbage returned {} rows", rows.rows());
  ctx->finalize();
  fmt::print("server kept serving after garbage\n");
  return 0;
}

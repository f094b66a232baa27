// dist_worker garbage: bad bytes and bad messages at a live server, which
// must answer or ignore them and keep serving this trainer correctly.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "job/job_security.h"
#include "net/transport.h"
#include "scenarios.h"
#include "server/partition_server.h"
#include "server/store_service.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"
#include "tessera/distributed/dist_graph.h"

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
  const tessera::net::Security job = tessera::distributed::job_security(ctx->env());
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
  auto expect_error = [&](std::vector<zmq::message_t> parts, const char* needle) {
    zmq::send_multipart(dealer, parts);
    zmq::pollitem_t item{static_cast<void*>(dealer), 0, ZMQ_POLLIN, 0};
    EXPECT_OR_FAIL(zmq::poll(&item, 1, std::chrono::milliseconds(5000)) == 1, "no reply to a bad message ({})", needle);
    std::vector<zmq::message_t> reply;
    (void)zmq::recv_multipart(dealer, std::back_inserter(reply));
    tessera::net::Header h;
    std::memcpy(&h, reply.at(0).data(), sizeof h);
    const std::string text = reply.size() > 1 ? reply[1].to_string() : "";
    EXPECT_OR_FAIL(h.status != 0 && text.find(needle) != std::string::npos, "reply to bad message: '{}' (wanted '{}')",
                   text, needle);
    fmt::print("bad message answered: {}\n", text);
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
  // 4. The server still serves correct requests.
  std::vector<int64_t> ids(g.num_nodes());
  std::iota(ids.begin(), ids.end(), 0);
  const Array rows = g.ndata("feat").pull(ids);
  EXPECT_OR_FAIL(rows.rows() == g.num_nodes(), "pull after garbage returned {} rows", rows.rows());
  ctx->finalize();
  fmt::print("server kept serving after garbage\n");
  return 0;
}

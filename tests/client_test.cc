// net::Client as one process makes them in a job: a loader's sampler threads
// and a collate thread each connect to the servers at the same moment, and
// every client must watch its own connections (each gets a monitor endpoint
// of its own; two with one name would fail with "Address already in use").
// And a client whose server is restarted on its port (by a supervisor, or a
// launcher's restart) while the client holds the old connection.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "net/security.h"
#include "net/transport.h"
#include "tessera/base/error.h"
#include "test_util.h"

namespace tessera::net {
namespace {

using Clock = std::chrono::steady_clock;

// A server on its own thread that answers each request with its iarg (or,
// `mute`, takes requests and never answers: a server that dies mid-request).
class EchoServer {
 public:
  static constexpr RequestType kEcho = 100;

  EchoServer(const std::string& endpoint, const Security& security, int timeout_s, bool mute) {
    std::atomic<int> state{0};  // 1: bound; -1: the port is still held by the previous socket
    thread_ = std::thread([&, endpoint, security, timeout_s, mute] {
      std::unique_ptr<ServerSocket> socket;
      // A closed socket lets go of its port asynchronously (libzmq's I/O thread): retry for up to 5 s.
      for (int attempt = 0; attempt < 50 && !socket; ++attempt) {
        try {
          socket = std::make_unique<ServerSocket>(endpoint, "echo server", security, timeout_s);
        } catch (const Error&) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
      }
      state = socket ? 1 : -1;
      if (!socket) return;
      while (!stop_) {
        Request request;
        if (!socket->receive(&request, 50) || request.header.type != kEcho || mute) continue;
        Header header;
        header.iarg = request.header.iarg;
        socket->reply(request, header, {});
      }
    });
    while (state == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    bound_ = state == 1;
  }
  ~EchoServer() {
    stop_ = true;
    thread_.join();
  }
  bool bound() const { return bound_; }

 private:
  std::atomic<bool> stop_{false};
  bool bound_ = false;
  std::thread thread_;
};

// Sends an echo of `value` and waits: returns "" with the value echoed, or the error.
std::string echo(Client& client, int64_t value) {
  Header header = make_header(EchoServer::kEcho, 0, "");
  header.iarg = value;
  try {
    const std::vector<Reply> replies = client.wait({client.send(0, header, {})});
    return replies.at(0).header.iarg == value ? "" : "a reply to another request";
  } catch (const Error& e) {
    return e.what();
  }
}

TEST(Client, ManyMadeAtOnceOnSeveralThreadsEachWatchTheirOwnConnections) {
  const Security security{generate_job_keys(), true};
  // Nothing listens there: a client connects in the background, and what is
  // tested is making one.
  const int port = testing::free_port_block(2);
  const std::vector<ServerAddress> servers{{"server 0", fmt::format("tcp://127.0.0.1:{}", port)},
                                           {"server 1", fmt::format("tcp://127.0.0.1:{}", port + 1)}};
  constexpr int kThreads = 4;
  constexpr int kClientsEach = 24;  // 4 x 24 x 2 sockets and monitors: well under ZeroMQ's 1023 per process
  std::vector<std::string> errors(kThreads);
  std::vector<std::vector<std::unique_ptr<Client>>> clients(kThreads);
  std::atomic<int> waiting{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // All start together, so that the constructors overlap.
      --waiting;
      while (waiting.load() > 0) std::this_thread::yield();
      try {
        for (int k = 0; k < kClientsEach; ++k) clients[t].push_back(std::make_unique<Client>(servers, 5, security, 5));
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    EXPECT_EQ(clients[t].size(), static_cast<size_t>(kClientsEach)) << "thread " << t;
  }
}

// The server of a client's connection is replaced by another on the same
// port, once while the client is idle and once while it waits for a reply the
// old server will never send. Each time the client reaches the new server or
// fails naming its server, within the timeout: never a hang, never a reply
// meant for another request.
TEST(Client, AServerRestartedOnItsPortIsReachedOrReportedWithinTheTimeout) {
  constexpr int kTimeoutS = 3;
  const Security security{generate_job_keys(), true};
  const std::string endpoint = fmt::format("tcp://127.0.0.1:{}", testing::free_port_block(1));
  for (const bool in_flight : {false, true}) {
    SCOPED_TRACE(in_flight ? "a request in flight" : "the client idle");
    Client client({{"m1/server/0", endpoint}}, kTimeoutS, security, kTimeoutS);
    auto old_server = std::make_unique<EchoServer>(endpoint, security, kTimeoutS, /*mute=*/in_flight);
    ASSERT_TRUE(old_server->bound());
    uint64_t lost = 0;
    if (in_flight) {
      Header header = make_header(EchoServer::kEcho, 0, "");
      header.iarg = 7;
      lost = client.send(0, header, {});
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the old server has taken it
    } else {
      ASSERT_EQ(echo(client, 7), "");
    }
    old_server.reset();
    const EchoServer new_server(endpoint, security, kTimeoutS, false);
    ASSERT_TRUE(new_server.bound());
    const auto start = Clock::now();
    std::string outcome;
    if (in_flight) {
      try {
        client.wait({lost});
        outcome = "the lost request was answered";
      } catch (const Error& e) {
        outcome = e.what();
      }
    } else {
      outcome = echo(client, 8);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("%s: %s after %.2f s\n", in_flight ? "in flight" : "idle", outcome.empty() ? "reached the new server"
                                                                                         : outcome.c_str(), seconds);
    if (!outcome.empty()) {
      EXPECT_NE(outcome.find("m1/server/0 (" + endpoint + ")"), std::string::npos) << outcome;
    }
    if (in_flight) {
      EXPECT_NE(outcome, "the lost request was answered");
    }
    EXPECT_NE(outcome, "a reply to another request");
    EXPECT_LT(seconds, kTimeoutS + 1.0) << outcome;
    // Then every request has one of the two outcomes, at once.
    const auto next = Clock::now();
    const std::string again = echo(client, 9);
    if (!again.empty()) {
      EXPECT_NE(again.find("m1/server/0"), std::string::npos) << again;
    }
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - next).count(), kTimeoutS + 1.0) << again;
  }
}

}  // namespace
}  // namespace tessera::net

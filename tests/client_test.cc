// net::Client as one process makes them in a job: a loader's sampler threads
// and a collate thread each connect to the servers at the same moment, and
// every client must watch its own connections (each gets a monitor endpoint
// of its own; two with one name would fail with "Address already in use").
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "net/security.h"
#include "net/transport.h"
#include "test_util.h"

namespace tessera::net {
namespace {

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

}  // namespace
}  // namespace tessera::net

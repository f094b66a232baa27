// The trainers' collectives on the secured ring against Gloo's, members as
// threads of one process over a real rendezvous store on loopback: the same
// sums (float32 to 1e-6, float64 and int64 exactly) at sizes around the
// piece and chunk boundaries, broadcasts from every root, gathers of
// different lengths; then the failures: members that disagree on a size, a
// member that never comes, and a stranger's connection to a member's port;
// and the pieces' cipher alone (piece_cipher.h): what it refuses.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <zmq.hpp>

#include "distributed/piece_cipher.h"
#include "job/rendezvous.h"
#include "net/security.h"
#include "net/transport.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"
#include "tessera/distributed/collectives.h"
#include "test_util.h"

namespace tessera::distributed {
namespace {

using Member = std::function<void(int rank, job::Rendezvous& store)>;

// Runs `member` on `size` threads, rank 0 hosting the store; returns each
// rank's error text ("" when it returned).
std::vector<std::string> run_members(int size, const Member& member, int timeout_s = 30) {
  const int port = testing::free_port_block(1);
  const net::Security security{net::generate_job_keys(), true};
  std::vector<std::string> errors(size);
  std::vector<std::thread> threads;
  job::Rendezvous host("127.0.0.1", port, true, timeout_s, security);
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        std::unique_ptr<job::Rendezvous> client;
        if (rank > 0) client = std::make_unique<job::Rendezvous>("127.0.0.1", port, false, timeout_s, security);
        member(rank, rank == 0 ? host : *client);
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return errors;
}

template <typename T>
std::vector<T> random_values(int rank, int64_t n) {
  Rng rng(1000 + rank);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(static_cast<int64_t>(rng.below(2000001)) - 1000000) / T(1000);
  return v;
}

TEST(Collectives, TheSecuredRingSumsAsGlooDoes) {
  // Sizes: empty, fewer values than members, a piece's edge (1 MB of
  // float32 = 262,144), several pieces per chunk.
  const std::vector<int64_t> counts{0, 2, 7, 262144 * 3 + 1, 3'000'000};
  for (const int size : {2, 3}) {
    SCOPED_TRACE(size);
    std::vector<std::vector<std::vector<float>>> ring(size), gloo(size);
    std::vector<std::vector<double>> doubles(size);
    std::vector<std::vector<int64_t>> ints(size);
    const auto errors = run_members(size, [&](int rank, job::Rendezvous& store) {
      // 60 s to join: under a loaded suite (-j 2 beside other jobs) a
      // member of 3 once took over 30 s to reach the Gloo group.
      Collectives secured(&store, "ring/", rank, size, "127.0.0.1", 60, CollectiveWire::kSecuredRing);
      Collectives plain(&store, "gloo/", rank, size, "127.0.0.1", 60, CollectiveWire::kGloo);
      EXPECT_TRUE(secured.secured());
      EXPECT_FALSE(plain.secured());
      for (const int64_t n : counts) {
        std::vector<float> a = random_values<float>(rank, n), b = a;
        secured.all_reduce_sum(a.data(), n);
        plain.all_reduce_sum(b.data(), n);
        ring[rank].push_back(std::move(a));
        gloo[rank].push_back(std::move(b));
      }
      doubles[rank] = random_values<double>(rank, 100001);
      secured.all_reduce_sum(doubles[rank].data(), 100001);
      ints[rank].assign(1000, rank + 1);
      secured.all_reduce_sum(ints[rank].data(), 1000);
    }, 60);
    // Every member's error, not only the first: one member's failure
    // usually shows in the others as a wait that timed out.
    for (int r = 0; r < size; ++r) EXPECT_EQ(errors[r], "") << "member " << r;
    if (HasFailure()) return;
    for (size_t k = 0; k < counts.size(); ++k) {
      // Relative to the terms' magnitude: with 3 members the ring adds in
      // another order than Gloo, and float32 sums differ by their rounding.
      std::vector<double> magnitude(counts[k], 0.0);
      for (int r = 0; r < size; ++r) {
        const std::vector<float> terms = random_values<float>(r, counts[k]);
        for (int64_t i = 0; i < counts[k]; ++i) magnitude[i] += std::fabs(terms[i]);
      }
      for (int r = 0; r < size; ++r) {
        ASSERT_EQ(ring[r][k].size(), gloo[r][k].size());
        for (size_t i = 0; i < ring[r][k].size(); ++i)
          ASSERT_NEAR(ring[r][k][i], gloo[r][k][i], 1e-6 * std::max(1.0, magnitude[i]))
              << "count " << counts[k] << " rank " << r << " at " << i;
        // Every member ends with the same sum.
        EXPECT_EQ(ring[r][k], ring[0][k]);
      }
    }
    // float64 against the sum taken here, in the ring's order of addition
    // or another: exact to rounding.
    std::vector<double> expected(100001, 0.0);
    for (int r = 0; r < size; ++r) {
      const std::vector<double> v = random_values<double>(r, 100001);
      for (size_t i = 0; i < v.size(); ++i) expected[i] += v[i];
    }
    for (int r = 0; r < size; ++r) {
      for (size_t i = 0; i < expected.size(); ++i) ASSERT_NEAR(doubles[r][i], expected[i], 1e-9) << i;
      EXPECT_EQ(ints[r], std::vector<int64_t>(1000, size * (size + 1) / 2));
    }
  }
}

TEST(Collectives, BroadcastGatherAndBarrierOnTheRing) {
  const int size = 3;
  std::vector<std::vector<std::vector<float>>> received(size);
  std::vector<std::vector<std::vector<int64_t>>> gathered(size);
  const auto errors = run_members(size, [&](int rank, job::Rendezvous& store) {
    Collectives c(&store, "t/", rank, size, "127.0.0.1", 30);
    for (int root = 0; root < size; ++root) {
      // 2.5 pieces, so a member forwards while it receives.
      std::vector<float> data(655360, rank == root ? static_cast<float>(root + 1) : -1.0f);
      c.broadcast(data.data(), static_cast<int64_t>(data.size()), root);
      received[rank].push_back(std::move(data));
      c.barrier();
    }
    gathered[rank] = c.all_gather(std::vector<int64_t>(rank, rank));
  });
  // Every member's error first: the one that failed is rarely the one that waited.
  for (int r = 0; r < size; ++r) EXPECT_EQ(errors[r], "") << "member " << r;
  ASSERT_EQ(errors, std::vector<std::string>(size));
  for (int r = 0; r < size; ++r) {
    for (int root = 0; root < size; ++root)
      EXPECT_EQ(received[r][root], std::vector<float>(655360, static_cast<float>(root + 1))) << r << " " << root;
    ASSERT_EQ(gathered[r].size(), 3u);
    for (int k = 0; k < size; ++k) EXPECT_EQ(gathered[r][k], std::vector<int64_t>(k, k));
  }
}

TEST(Collectives, MembersThatDisagreeAreNamedNotSummed) {
  const auto errors = run_members(2, [&](int rank, job::Rendezvous& store) {
    Collectives c(&store, "t/", rank, 2, "127.0.0.1", 5);
    std::vector<float> data(rank == 0 ? 10 : 20, 1.0f);
    c.all_reduce_sum(data.data(), static_cast<int64_t>(data.size()));
  });
  // At least one member sees the other's piece of the wrong size; the other
  // may then wait for a piece that never comes.
  const std::string both = errors[0] + " | " + errors[1];
  EXPECT_NE(both.find("the trainers called different collectives, or with different sizes"), std::string::npos)
      << both;
}

TEST(Collectives, AMemberThatNeverComesFailsTheOthersWithinTheTimeout) {
  const auto started = std::chrono::steady_clock::now();
  const auto errors = run_members(2, [&](int rank, job::Rendezvous& store) {
    Collectives c(&store, "t/", rank, 2, "127.0.0.1", 2);
    if (rank == 1) return;  // joins the ring, never sums
    float x = 1;
    c.all_reduce_sum(&x, 1);
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_NE(errors[0].find("got nothing from trainer 1 within 2 s"), std::string::npos) << errors[0];
  EXPECT_EQ(errors[1], "");
  EXPECT_LT(seconds, 10);
}

// bench/sage.sh's hook puts an encrypted job's collectives on Gloo (every
// member has the variable, as --extra-envs gives it); a value it does not
// know is an error naming the variable, not a silent choice.
TEST(Collectives, TheBenchHookPicksGlooAndRefusesUnknownWires) {
  ::setenv("TESSERA_BENCH_COLLECTIVES", "gloo", 1);
  const auto errors = run_members(2, [&](int rank, job::Rendezvous& store) {
    Collectives c(&store, "t/", rank, 2, "127.0.0.1", 10);
    EXPECT_FALSE(c.secured());
    std::vector<float> data(100, static_cast<float>(rank + 1));
    c.all_reduce_sum(data.data(), 100);
    EXPECT_EQ(data, std::vector<float>(100, 3.0f));
  });
  EXPECT_EQ(errors[0] + errors[1], "");
  ::setenv("TESSERA_BENCH_COLLECTIVES", "fast", 1);
  const auto refused =
      run_members(1, [&](int, job::Rendezvous& store) { Collectives c(&store, "u/", 0, 2, "127.0.0.1", 2); });
  ::unsetenv("TESSERA_BENCH_COLLECTIVES");
  EXPECT_NE(refused[0].find("TESSERA_BENCH_COLLECTIVES is 'fast', expected ring or gloo"), std::string::npos)
      << refused[0];
}

// A process without the job's keys reaches a member's port and sends it
// junk, and a forged piece under the exact header due next: the ring drops
// both (they do not open under the job's keys), and the sums are untouched.
TEST(Collectives, AStrangerCannotFeedTheRing) {
  std::vector<std::vector<float>> sums(2);
  const auto errors = run_members(2, [&](int rank, job::Rendezvous& store) {
    Collectives c(&store, "t/", rank, 2, "127.0.0.1", 10);
    if (rank == 0) {
      const std::string published = store.get("t/ring/0");
      const std::string endpoint = published.substr(0, published.find(' '));
      zmq::socket_t stranger(net::zmq_context(), zmq::socket_type::push);
      stranger.set(zmq::sockopt::linger, 0);
      stranger.connect(endpoint);
      std::vector<char> junk(64, 7);
      (void)stranger.send(zmq::buffer(junk), zmq::send_flags::dontwait);
      // Collective 1's first piece (member 0 receives rank 1's 500 floats), sealed under a key of its own.
      const PieceHeader due{1, 0, 500 * sizeof(float)};
      std::vector<char> forged(sizeof due + due.bytes + kPieceTagBytes, 0);
      std::memcpy(forged.data(), &due, sizeof due);
      PieceCipher own(net::generate_job_keys().secret_key, "t/ring/1", PieceCipher::new_salt());
      std::vector<float> lie(500, 100.0f);
      own.seal(due, lie.data(), forged.data() + sizeof due);
      (void)stranger.send(zmq::buffer(forged), zmq::send_flags::dontwait);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    sums[rank].assign(1000, static_cast<float>(rank + 1));
    c.all_reduce_sum(sums[rank].data(), 1000);
  });
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  EXPECT_EQ(sums[0], std::vector<float>(1000, 3.0f));
  EXPECT_EQ(sums[1], std::vector<float>(1000, 3.0f));
}

// A piece opens only under its sender's key (the job's secret, the sender's
// context and salt) with its own header, ciphertext and tag.
TEST(PieceCipher, OpensOnlyTheSendersUntouchedPiece) {
  const std::string secret = net::generate_job_keys().secret_key, salt = PieceCipher::new_salt();
  PieceCipher sender(secret, "g/ring/1", salt);
  const std::vector<float> values = random_values<float>(1, 300);
  const PieceHeader header{7, 3, static_cast<uint32_t>(values.size() * sizeof(float))};
  std::vector<unsigned char> sealed(header.bytes + kPieceTagBytes);
  sender.seal(header, values.data(), sealed.data());
  EXPECT_NE(std::memcmp(sealed.data(), values.data(), header.bytes), 0) << "the piece travels in the clear";
  std::vector<float> plain(values.size());
  PieceCipher receiver(secret, "g/ring/1", salt);
  ASSERT_TRUE(receiver.open(header, sealed.data(), plain.data()));
  EXPECT_EQ(plain, values);
  // Each change is refused.
  for (const PieceHeader other : {PieceHeader{8, 3, header.bytes}, PieceHeader{7, 4, header.bytes}})
    EXPECT_FALSE(receiver.open(other, sealed.data(), plain.data())) << "another header opened the piece";
  for (const size_t at : {size_t{0}, size_t{header.bytes - 1}, size_t{header.bytes + 5}}) {
    std::vector<unsigned char> tampered = sealed;
    tampered[at] ^= 1;
    EXPECT_FALSE(receiver.open(header, tampered.data(), plain.data())) << "a flipped bit at " << at << " opened";
  }
  PieceCipher other_salt(secret, "g/ring/1", PieceCipher::new_salt()), other_member(secret, "g/ring/0", salt),
      other_job(net::generate_job_keys().secret_key, "g/ring/1", salt);
  for (PieceCipher* wrong : {&other_salt, &other_member, &other_job})
    EXPECT_FALSE(wrong->open(header, sealed.data(), plain.data())) << "another key opened the piece";
  EXPECT_THROW(PieceCipher(secret, "g/ring/1", "not hex"), Error);
  EXPECT_THROW(PieceCipher("short", "g/ring/1", salt), Error);
}

}  // namespace
}  // namespace tessera::distributed

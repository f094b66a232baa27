// In-process tests of the pieces under the runtime: the wire header's
// checks, row operations and locks, the partition book.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "net/message.h"
#include "net/transport.h"
#include "server/store_service.h"
#include "tessera/partition/partition_book.h"
#include "store/row_locks.h"
#include "tessera/store/tensor.h"
#include "store/tensor_ops.h"
#include "tessera/base/error.h"

namespace tessera {
namespace {

using net::Header;
using net::ProtocolError;

std::string decode_error(const Header& h, size_t bytes, size_t frames) {
  try {
    net::decode_header(&h, bytes, frames);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "";
}

TEST(Wire, HeaderDecodeRejectsEveryMalformedField) {
  Header good = net::make_header(server::kPull, 7, "node/_N/feat");
  net::set_shape(&good, DType::kInt64, {10});
  good.num_frames = 1;
  EXPECT_EQ(decode_error(good, sizeof good, 1), "");
  EXPECT_NE(decode_error(good, sizeof good - 1, 1).find("header frame has 255 bytes"), std::string::npos);
  EXPECT_NE(decode_error(good, sizeof good, 2).find("announces 1 payload frames"), std::string::npos);
  Header h = good;
  h.magic = 1;
  EXPECT_NE(decode_error(h, sizeof h, 1).find("bad magic"), std::string::npos);
  h = good;
  h.version = 9;
  EXPECT_NE(decode_error(h, sizeof h, 1).find("protocol version 9"), std::string::npos);
  h = good;
  h.type = 0;
  EXPECT_NE(decode_error(h, sizeof h, 1).find("message type 0"), std::string::npos);
  h.type = 999;  // the wire carries any type; the server's registry answers "no service"
  EXPECT_EQ(decode_error(h, sizeof h, 1), "");
  h = good;
  std::memset(h.name, 'x', sizeof h.name);
  EXPECT_NE(decode_error(h, sizeof h, 1).find("not terminated"), std::string::npos);
  h = good;
  h.ndim = 5;
  EXPECT_NE(decode_error(h, sizeof h, 1).find("5 dimensions"), std::string::npos);
  h = good;
  h.shape[0] = -3;
  EXPECT_NE(decode_error(h, sizeof h, 1).find("shape dimension 0 is -3"), std::string::npos);
  EXPECT_THROW(net::check_frame(16, DType::kInt64, 3, 1, "ids"), ProtocolError);
  EXPECT_NO_THROW(net::check_frame(24, DType::kInt64, 3, 1, "ids"));
  EXPECT_THROW(net::make_header(server::kPull, 1, std::string(200, 'n')), std::invalid_argument);
}

store::LocalTensor zeros_tensor(int64_t rows, int64_t width) {
  store::TensorSpec spec;
  spec.name = "t";
  spec.row_shape = {width};
  spec.policy = "node:_N";
  return store::create_heap_tensor(spec, 0, rows);
}

TEST(RowOps, ConcurrentAddsUnderStripeLocksLoseNothing) {
  store::LocalTensor t = zeros_tensor(8, 16);
  std::vector<uint32_t> memory(store::RowLocks::kStripes, 0);
  store::RowLocks locks(memory.data());
  const std::vector<int64_t> rows{0, 3, 3, 7};
  const std::vector<float> ones(rows.size() * 16, 1.0f);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) store::add_rows(t, rows.data(), 4, ones.data(), locks);
    });
  for (auto& th : threads) th.join();
  const float* d = t.rows.data<float>();
  EXPECT_EQ(d[0 * 16], 8000.0f);
  EXPECT_EQ(d[3 * 16 + 5], 16000.0f);  // listed twice per push
  EXPECT_EQ(d[7 * 16 + 15], 8000.0f);
  EXPECT_EQ(d[1 * 16], 0.0f);
}

TEST(RowOps, ReadsOfAWritableTensorNeverSeeHalfAWrite) {
  // One thread assigns whole rows (all i, for i = 1, 2, ...) while this one gathers them, as a server's pull
  // handler reads rows that another process's pushes write: every row read must be one write's, uniform.
  store::LocalTensor t = zeros_tensor(4, 1024);
  ASSERT_TRUE(t.writable);
  std::vector<uint32_t> memory(store::RowLocks::kStripes, 0);
  store::RowLocks locks(memory.data());
  const std::vector<int64_t> rows{0, 1, 2, 3};
  std::atomic<bool> done{false};
  std::thread writer([&] {
    std::vector<float> v(rows.size() * 1024);
    for (int i = 1; i <= 20000; ++i) {
      std::fill(v.begin(), v.end(), static_cast<float>(i));
      store::assign_rows(t, rows.data(), 4, v.data(), locks);
    }
    done = true;
  });
  std::vector<float> out(rows.size() * 1024);
  int64_t reads = 0, torn = 0;
  while (!done) {
    store::gather_rows(t, rows.data(), 4, locks, out.data());
    for (size_t r = 0; r < rows.size(); ++r, ++reads) {
      const float* row = out.data() + r * 1024;
      torn += std::any_of(row, row + 1024, [&](float x) { return x != row[0]; });
    }
  }
  writer.join();
  EXPECT_GT(reads, 0);
  EXPECT_EQ(torn, 0) << "of " << reads << " rows read";
}

TEST(RowOps, OnlyWritableTensorsAreReadUnderTheirStripeLocks) {
  store::LocalTensor t = zeros_tensor(4, 2);
  std::vector<uint32_t> memory(store::RowLocks::kStripes, 0);
  store::RowLocks locks(memory.data(), 1);
  const std::vector<int64_t> row{2};
  locks.lock(store::RowLocks::stripe(t.lock_key, 2));  // a writer inside its section, for good
  std::vector<float> out(2);
  t.writable = false;  // features loaded from the partition files: never written, read without locks
  EXPECT_NO_THROW(store::gather_rows(t, row.data(), 1, locks, out.data()));
  t.writable = true;  // the read waits for the stripe, here until it is taken for a dead holder's
  try {
    store::gather_rows(t, row.data(), 1, locks, out.data());
    FAIL() << "a writable tensor's row was read without its stripe lock";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has been held for over 1 s"), std::string::npos) << e.what();
  }
}

TEST(RowOps, AStripeHeldByADeadProcessIsAnErrorNotAHang) {
  std::vector<uint32_t> memory(store::RowLocks::kStripes, 0);
  store::RowLocks locks(memory.data(), 1);
  locks.lock(17);  // and never unlocked, as by a process killed inside its section
  try {
    locks.lock(17);
    FAIL() << "a stripe held for good was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stripe 17 has been held for over 1 s"), std::string::npos) << e.what();
  }
  locks.lock(18);  // the other stripes are unaffected
  locks.unlock(18);
}

TEST(RowOps, AWaiterForAStripeAHolderLeftHeldFailsWithItsOwnersCause) {
  std::vector<uint32_t> memory(store::RowLocks::kStripes, 0);
  store::RowLocks locks(memory.data());  // the stuck limit of 10 s is not reached: the owner's check comes first
  int checks = 0;
  locks.check_while_waiting([&] {
    if (++checks == 3) fail("server m1/server/0 (tcp://127.0.0.1:1) is gone: its connection closed");
  });
  locks.lock(17);  // a server killed inside its section
  try {
    locks.lock(17);
    FAIL() << "a stripe held for good was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("server m1/server/0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(checks, 3);
  locks.lock(18);  // a free stripe is taken without a check
  locks.unlock(18);
  EXPECT_EQ(checks, 3);
}

TEST(RowOps, BadRowsAndReadOnlyTensorsAreErrorsBeforeAnyWrite) {
  store::LocalTensor t = zeros_tensor(4, 2);
  std::vector<uint32_t> memory(store::RowLocks::kStripes, 0);
  store::RowLocks locks(memory.data());
  const std::vector<int64_t> rows{1, 4};
  const std::vector<float> v(4, 5.0f);
  EXPECT_THROW(store::add_rows(t, rows.data(), 2, v.data(), locks), Error);
  EXPECT_EQ(t.rows.data<float>()[2], 0.0f);  // row 1 untouched: the check comes first
  t.writable = false;
  const std::vector<int64_t> ok{1};
  try {
    store::assign_rows(t, ok.data(), 1, v.data(), locks);
    FAIL() << "wrote to a read-only tensor";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos);
  }
}

// DGL-KE's row-wise Adagrad, stepped twice on rows 0 and 2 and checked
// against the update written out in doubles; row 1 is never touched.
TEST(RowOps, RowAdagradKeepsOneAccumulatorPerRow) {
  store::LocalTensor w = zeros_tensor(3, 4);
  store::TensorSpec state_spec;
  state_spec.name = "t.row_adagrad_sum";
  state_spec.policy = "node:_N";  // row shape {}: one float per row
  store::LocalTensor state = store::create_heap_tensor(state_spec, 0, 3);
  for (int64_t k = 0; k < 12; ++k) w.rows.data<float>()[k] = 0.1f * static_cast<float>(k);
  std::vector<double> want(w.rows.data<float>(), w.rows.data<float>() + 12), acc(3, 0.0);
  std::vector<uint32_t> memory(store::RowLocks::kStripes, 0);
  store::RowLocks locks(memory.data());
  const std::vector<int64_t> rows{2, 0};
  const store::AdagradParams p{0.5f, 1e-10f};
  for (int step = 0; step < 2; ++step) {
    std::vector<float> grads(8);
    for (int k = 0; k < 8; ++k) grads[k] = static_cast<float>((k + 1) * (step + 1)) * (k % 2 ? -0.25f : 0.5f);
    store::row_adagrad_rows(w, state, rows.data(), 2, grads.data(), p, locks);
    for (int i = 0; i < 2; ++i) {
      double squares = 0;
      for (int k = 0; k < 4; ++k) squares += double(grads[i * 4 + k]) * grads[i * 4 + k];
      acc[rows[i]] += squares / 4;
      for (int k = 0; k < 4; ++k) want[rows[i] * 4 + k] -= 0.5 * grads[i * 4 + k] / (std::sqrt(acc[rows[i]]) + 1e-10);
    }
  }
  for (int k = 0; k < 12; ++k) EXPECT_NEAR(w.rows.data<float>()[k], want[k], 1e-5) << "element " << k;
  EXPECT_NEAR(state.rows.data<float>()[0], acc[0], 1e-4);
  EXPECT_EQ(state.rows.data<float>()[1], 0.0f);
  EXPECT_EQ(w.rows.data<float>()[4], 0.4f) << "row 1 was not stepped";
}

TEST(RowOps, RandomInitDependsOnIdNotOnPartitioning) {
  store::TensorSpec spec;
  spec.name = "e";
  spec.row_shape = {4};
  spec.policy = "node:_N";
  spec.init = {"normal", 0, 1, 42};
  const store::LocalTensor whole = store::create_heap_tensor(spec, 0, 10);
  const store::LocalTensor tail = store::create_heap_tensor(spec, 6, 4);  // rows 6..9 on another "partition"
  EXPECT_EQ(std::memcmp(whole.rows.data<float>() + 6 * 4, tail.rows.data<float>(), 4 * 4 * sizeof(float)), 0);
}

TEST(PartitionBookTest, SplitFindsOwnerAndLocalRow) {
  PartitionConfig config;
  config.num_parts = 3;
  config.ntypes = {"a", "b"};
  config.etypes = {"a:r:b"};
  // Partition-major, type-minor homogeneous ranges.
  config.node_map = {{{0, 5}, {9, 10}, {12, 20}}, {{5, 9}, {10, 12}, {20, 21}}};
  config.edge_map = {{{0, 3}, {3, 4}, {4, 9}}};
  PartitionBook book(config);
  const IdSpace& a = book.space("node:a");
  EXPECT_EQ(a.size(), 14);
  EXPECT_EQ(a.owner(4), 0);
  EXPECT_EQ(a.owner(5), 1);
  EXPECT_EQ(a.owner(6), 2);
  EXPECT_EQ(a.owner(14), -1);
  const std::vector<int64_t> ids{13, 0, 5, 6};
  const SplitIds split = book.split(a, ids.data(), 4, "test");
  EXPECT_EQ(split.local_rows[2], (std::vector<int64_t>{7, 0}));
  EXPECT_EQ(split.positions[2], (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(split.local_rows[1], (std::vector<int64_t>{0}));
  EXPECT_EQ(book.space("node:b").homogeneous_first[1], 10);
  try {
    book.space("node:c");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node:a, node:b, edge:a:r:b"), std::string::npos) << e.what();
  }
  const std::vector<int64_t> bad{14};
  EXPECT_THROW(book.split(a, bad.data(), 1, "test"), Error);
}

TEST(Store, TensorSpecRejectsNumbersThatAreNotIntegers) {
  // Found by tests/fuzz/message_fuzz.cc (a kCreate request's spec frame):
  // get<uint64_t>() of 1e300 and get<int64_t>() of 1e30 were undefined
  // behaviour instead of a bad tensor spec.
  const std::string good = R"({"name": "emb", "dtype": "float32", "row_shape": [4], "policy": "node",
                                "persistent": false, "init": "zeros", "init_a": 0, "init_b": 0, "seed": 42})";
  EXPECT_EQ(store::TensorSpec::from_json(good).row_shape, std::vector<int64_t>{4});
  for (const auto& [from, to, message] :
       {std::tuple<std::string, std::string, std::string>{"\"seed\": 42", "\"seed\": 1e300", "seed is 1e+300"},
        {"\"seed\": 42", "\"seed\": -1", "seed is -1"},
        {"[4]", "[1e30]", "row_shape holds 1e+30"}}) {
    std::string spec = good;
    spec.replace(spec.find(from), from.size(), to);
    try {
      store::TensorSpec::from_json(spec);
      ADD_FAILURE() << "accepted " << spec;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("bad tensor spec: " + message), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tessera

// Checkpoints on disk: published whole or not at all, checked against their
// manifests, the newest `keep` kept.
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "tessera/base/error.h"
#include "tessera/train/checkpoint.h"
#include "test_util.h"

namespace tessera::train {
namespace {

namespace fs = std::filesystem;

void write_payload(const std::string& dir, int value) {
  std::ofstream(dir + "/weights.bin") << std::string(1000, static_cast<char>('a' + value));
  std::ofstream(dir + "/state.json") << "{\"value\": " << value << "}";
}

TEST(Checkpoints, KeepsTheNewestIntactOnes) {
  testing::TempDir dir;
  const Checkpoints c(dir.path(), "trainer-3", 2);
  EXPECT_TRUE(c.intact().empty());
  for (int e = 1; e <= 3; ++e) c.save(e, [&](const std::string& d) { write_payload(d, e); });
  EXPECT_EQ(c.intact(), (std::vector<int64_t>{3, 2}));
  EXPECT_FALSE(fs::exists(c.path(1)));
  EXPECT_EQ(c.path(3), dir.path() + "/trainer-3/epoch-3");
  EXPECT_TRUE(fs::exists(c.path(3) + "/MANIFEST.json"));
}

TEST(Checkpoints, AnInterruptedOrDamagedOneIsNeverLoaded) {
  testing::TempDir dir;
  const Checkpoints c(dir.path(), "server-0", 3);
  c.save(1, [&](const std::string& d) { write_payload(d, 1); });
  c.save(2, [&](const std::string& d) { write_payload(d, 2); });
  // A save that fails half-way (a killed process leaves its staging
  // directory behind; an exception removes it) publishes nothing.
  EXPECT_THROW(c.save(3,
                      [&](const std::string& d) {
                        write_payload(d, 3);
                        throw std::runtime_error("disk full");
                      }),
               std::runtime_error);
  EXPECT_FALSE(fs::exists(c.path(3)));
  fs::create_directories(c.path(4) + ".tessera-tmp-999");
  write_payload(c.path(4) + ".tessera-tmp-999", 4);
  EXPECT_EQ(c.intact(), (std::vector<int64_t>{2, 1}));

  // Same size, one byte changed: the checksum tells.
  {
    std::fstream f(c.path(2) + "/weights.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(500);
    f.put('z');
  }
  EXPECT_EQ(c.intact(), (std::vector<int64_t>{1}));
  // A missing file, a truncated one, a missing or unreadable manifest.
  c.save(5, [&](const std::string& d) { write_payload(d, 5); });
  c.save(6, [&](const std::string& d) { write_payload(d, 6); });
  c.save(7, [&](const std::string& d) { write_payload(d, 7); });
  fs::remove(c.path(5) + "/state.json");
  fs::resize_file(c.path(6) + "/weights.bin", 10);
  std::ofstream(c.path(7) + "/MANIFEST.json") << "{\"files\": ";
  EXPECT_TRUE(c.intact().empty());
}

TEST(Checkpoints, FlagsAreChecked) {
  CheckpointOptions o;
  o.every = -1;
  EXPECT_THROW(check(o), Error);
  o.every = 0;
  o.keep = 0;
  EXPECT_THROW(check(o), Error);
}

}  // namespace
}  // namespace tessera::train

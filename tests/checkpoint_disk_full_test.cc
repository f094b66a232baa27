// A checkpoint directory on a disk that fills while a checkpoint is written (a size-limited tmpfs): the job ends
// with one error naming the file and ENOSPC (not a crash), every checkpoint left on the disk is whole, and --resume
// once space is freed continues from the newest whole one, to the accuracy (or MRR) of an uninterrupted run.
// Mounting needs root, as the cluster tests do; elsewhere the tests skip.
#include <sys/mount.h>

#include <filesystem>
#include <regex>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tessera/io/checkpoints.h"
#include "test_util.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

// A tmpfs of `kib` KiB at `path`, unmounted on destruction.
class SmallDisk {
 public:
  SmallDisk(std::string path, int kib) : path_(std::move(path)) {
    fs::create_directories(path_);
    mounted_ = ::mount("tmpfs", path_.c_str(), "tmpfs", 0, fmt::format("size={}k", kib).c_str()) == 0;
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  // Frees space as an operator would: the disk grows to `kib`.
  bool grow(int kib) {
    return ::mount("tmpfs", path_.c_str(), "tmpfs", MS_REMOUNT, fmt::format("size={}k", kib).c_str()) == 0;
  }

 private:
  std::string path_;
  bool mounted_ = false;
};

// Every entry under `dir`/<owner>/ is a whole checkpoint (no staging leftovers, no damage); returns their count.
int expect_only_whole_checkpoints(const std::string& dir) {
  int whole = 0;
  for (const auto& owner : fs::directory_iterator(dir)) {
    for (const auto& entry : fs::directory_iterator(owner.path())) {
      const std::string name = entry.path().filename().string();
      EXPECT_TRUE(std::regex_match(name, std::regex("(epoch|step)-\\d+"))) << "a leftover: " << entry.path();
      EXPECT_EQ(checkpoint_damage(entry.path().string()), "") << entry.path();
      ++whole;
    }
  }
  return whole;
}

// Runs `run` with its checkpoints on a `kib`-KiB disk at `disk_path` until the disk fills: one error naming the
// file (`file` matches its name under <owner>/<unit>-N...) and ENOSPC, only whole checkpoints left. Then grows the
// disk, runs `run --resume`, checks that it went on from the newest whole checkpoint, and compares the final
// record's `metric` with `plain` (the uninterrupted run's).
void fill_then_resume(const std::string& run, const std::string& disk_path, int kib, const std::string& unit,
                      const std::string& file, const std::string& metric, double plain) {
  SmallDisk disk(disk_path, kib);
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  const CommandResult full = run_tessera(run);
  EXPECT_EQ(full.exit_code, 1) << full.out << full.err;
  EXPECT_TRUE(std::regex_search(full.err, std::regex("tessera: error: " + disk_path + "/trainer-0/" + unit + "-\\d+\\S*/" +
                                                     file + ": .*No space left on device \\(ENOSPC\\)")))
      << full.err;
  const int whole = expect_only_whole_checkpoints(disk_path);
  const std::vector<int64_t> intact = Checkpoints(disk_path, "trainer-0", 2, unit).intact();
  ASSERT_FALSE(intact.empty());

  ASSERT_TRUE(disk.grow(64 * 1024));
  const CommandResult resumed = run_tessera(run + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  const std::string all = resumed.out + resumed.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(all, m, std::regex("resuming after " + unit + " (\\d+) from \\S+/" + unit + "-(\\d+)")))
      << all;
  EXPECT_EQ(std::stoll(m[2].str()), intact.front());
  const double value = final_metrics(resumed.out)[metric].get<double>();
  std::printf("disk full at a checkpoint: %d whole checkpoint(s) left, resumed from %s-%s, %s %.4f (uninterrupted "
              "%.4f)\n", whole, unit.c_str(), m[2].str().c_str(), metric.c_str(), value, plain);
  EXPECT_NEAR(value, plain, 0.02);
  expect_only_whole_checkpoints(disk_path);
}

constexpr const char* kSage =
    "train sage --standalone --graph-name cora --fan-out 10,25 --batch-size 32 --lr 0.01 --num-hidden 64 "
    "--dropout 0.6 --weight-decay 5e-4 --aggregator gcn --seed 1 --num-epochs 30 --eval-every 30";

TEST(CheckpointDiskFull, SageEndsNamingTheFileAndResumesFromTheNewestWholeCheckpoint) {
  TESSERA_REQUIRE_SHARED("node/cora", cora);
  TempDir dir;
  ASSERT_EQ(run_tessera(fmt::format("partition --input {} --graph-name cora --num-parts 1 --out {}/p1", cora,
                                    dir.path())).exit_code, 0);
  const std::string part = fmt::format("--part-config {}/p1/cora.json", dir.path());
  const CommandResult plain = run_tessera(fmt::format("{} {} --out {}/plain", kSage, part, dir.path()));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  // A checkpoint of this model is ~1.1 MB: two fit, the third fills the disk.
  const std::string disk = dir.path() + "/disk";
  fill_then_resume(fmt::format("{} {} --checkpoint-dir {} --out {}/out", kSage, part, disk, dir.path()), disk, 2600,
                   "epoch", "\\w+\\.pt", "test_acc", final_metrics(plain.out)["test_acc"].get<double>());
}

// KGE keeps its entity and relation rows (and their optimizer state) as .npy files: the same on its writer.
TEST(CheckpointDiskFull, KgeEndsNamingTheFileAndResumesFromTheNewestWholeCheckpoint) {
  TESSERA_REQUIRE_SHARED("kg/umls", umls);
  TempDir dir;
  const std::string kge = fmt::format(
      "kge train --data_path {} --model_name DistMult --hidden_dim 64 --lr 0.1 --batch_size 256 --neg_sample_size 64 "
      "-adv --max_step 4000 --log_interval 1000 --checkpoint_interval 1000 --num_thread 1 --test --seed 2",
      umls);
  const CommandResult plain = run_tessera(fmt::format("{} --save_path {}/plain", kge, dir.path()));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  // A checkpoint is ~52 KB: one fits, the second fills the disk.
  const std::string disk = dir.path() + "/disk";
  fill_then_resume(fmt::format("{} --checkpoint_dir {} --save_path {}/out", kge, disk, dir.path()), disk, 80, "step",
                   "\\w+\\.(npy|json)\\S*", "test_mrr", final_metrics(plain.out)["test_mrr"].get<double>());
}

}  // namespace
}  // namespace tessera::testing

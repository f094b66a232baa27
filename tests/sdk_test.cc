// The installed SDK as an outside project sees it: `cmake --install` into a
// temporary prefix, every public header compiled on its own against that
// prefix alone, and examples/cpp built with find_package(Tessera) and run
// as real jobs (GAT on Cora over 2 machines; node embeddings learned on a
// featureless graph).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tessera/io/npy.h"
#include "test_util.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

// Installs the build tree into dir/prefix; returns the prefix.
std::string install(const std::string& dir) {
  const std::string prefix = dir + "/prefix";
  const CommandResult r = run_command(fmt::format("cmake --install {} --prefix {}", TESSERA_BUILD_DIR, prefix));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return prefix;
}

// Configures and builds `targets` of examples/cpp against `prefix`, in
// dir/examples; returns that build directory.
std::string build_examples(const std::string& dir, const std::string& prefix, const std::string& targets) {
  const std::string out = dir + "/examples";
  CommandResult r = run_command(fmt::format("cmake -S {}/examples/cpp -B {} -G Ninja -DCMAKE_PREFIX_PATH={}",
                                            TESSERA_SOURCE_DIR, out, prefix));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = run_command(fmt::format("cmake --build {} -j 2 --target {}", out, targets));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return out;
}

std::vector<std::string> installed_headers(const std::string& prefix) {
  std::vector<std::string> headers;
  for (const auto& e : fs::recursive_directory_iterator(prefix + "/include/tessera"))
    if (e.path().extension() == ".h") headers.push_back(fs::relative(e.path(), prefix + "/include").string());
  std::sort(headers.begin(), headers.end());
  return headers;
}

TEST(Sdk, InstallLaysOutLibraryPackageAndHeaders) {
  TempDir dir;
  const std::string p = install(dir.path());
  for (const char* file : {"bin/tessera", "lib/libtessera.so", "lib/cmake/Tessera/TesseraConfig.cmake",
                           "lib/cmake/Tessera/TesseraConfigVersion.cmake", "lib/cmake/Tessera/TesseraTargets.cmake",
                           "lib/pkgconfig/tessera.pc", "include/tessera/version.h",
                           "include/tessera/distributed/context.h"})
    EXPECT_TRUE(fs::exists(p + "/" + file)) << file;
  // A versioned soname, and a binary that loads the installed library.
  const CommandResult soname = run_command(fmt::format("readelf -d {}/lib/libtessera.so", p));
  EXPECT_NE(soname.out.find("Library soname: [libtessera.so.0.2]"), std::string::npos) << soname.out;
  const CommandResult ldd = run_command(fmt::format("ldd {}/bin/tessera", p));
  EXPECT_NE(ldd.out.find("libtessera.so.0.2 => " + p + "/"), std::string::npos) << ldd.out;
  // Every public header of the source tree is installed; no internal one is.
  std::set<std::string> expected{"tessera/version.h"};
  const std::string include = std::string(TESSERA_SOURCE_DIR) + "/include";
  for (const auto& e : fs::recursive_directory_iterator(include + "/tessera"))
    if (e.path().extension() == ".h") expected.insert(fs::relative(e.path(), include).string());
  const std::vector<std::string> got = installed_headers(p);
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()), expected);
  // pkg-config finds the installation where it is.
  const CommandResult pc =
      run_command(fmt::format("PKG_CONFIG_PATH={}/lib/pkgconfig pkg-config --libs tessera", p));
  EXPECT_EQ(pc.exit_code, 0) << pc.err;
  EXPECT_NE(pc.out.find("-ltessera"), std::string::npos) << pc.out;
}

TEST(Sdk, EveryPublicHeaderCompilesAloneAndIncludesOnlyInstalledHeaders) {
  TempDir dir;
  const std::string p = install(dir.path());
  const std::vector<std::string> headers = installed_headers(p);
  ASSERT_GT(headers.size(), 30u);
  const std::regex include_line(R"re(^\s*#\s*include\s*["<](tessera/[^">]+)[">])re");
  const std::regex quoted_include(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::string sources;
  const std::string project = dir.path() + "/headers";
  fs::create_directories(project);
  for (size_t i = 0; i < headers.size(); ++i) {
    // What a header includes of Tessera must be installed, and a quoted
    // include can only name Tessera's own (installed) headers.
    std::ifstream in(p + "/include/" + headers[i]);
    std::string line, first;
    std::getline(in, first);
    EXPECT_EQ(first.rfind("//", 0), 0u) << headers[i] << " does not open with its contract comment";
    while (std::getline(in, line)) {
      std::smatch m;
      if (std::regex_search(line, m, include_line))
        EXPECT_TRUE(fs::exists(p + "/include/" + m[1].str())) << headers[i] << " includes " << m[1];
      else if (std::regex_search(line, m, quoted_include))
        ADD_FAILURE() << headers[i] << " includes \"" << m[1] << "\", which is not an installed Tessera header";
    }
    // The header alone, first in its translation unit.
    const std::string source = fmt::format("h{}.cc", i);
    std::ofstream(project + "/" + source) << "#include <" << headers[i] << ">\n";
    sources += " " + source;
  }
  std::ofstream(project + "/CMakeLists.txt")
      << "cmake_minimum_required(VERSION 3.22)\nproject(headers CXX)\nfind_package(Tessera REQUIRED)\n"
      << "add_library(headers OBJECT" << sources << ")\n"
      << "target_link_libraries(headers PRIVATE Tessera::tessera)\n";
  CommandResult r = run_command(fmt::format("cmake -S {} -B {}/build -G Ninja -DCMAKE_PREFIX_PATH={}", project, project, p));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = run_command(fmt::format("cmake --build {}/build -j 2 -- -k 0", project));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(Sdk, ExamplesBuildAgainstTheInstallAndTrainGatOnCora) {
  TESSERA_REQUIRE_SHARED("node/cora", cora);
  TempDir dir;
  const std::string d = dir.path();
  const std::string p = install(d);
  const std::string examples = build_examples(d, p, "first_steps train_gat");
  const std::string tessera = p + "/bin/tessera";
  ASSERT_EQ(run_command(fmt::format("{} partition --input {} --graph-name cora --num-parts 1 --out {}/p1", tessera,
                                    cora, d)).exit_code, 0);
  ASSERT_EQ(run_command(fmt::format("{} partition --input {} --graph-name cora --num-parts 2 --balance-train "
                                    "--out {}/p2", tessera, cora, d)).exit_code, 0);

  // The snippet of docs/cpp-sdk.md: standalone, Cora's 140 training rows.
  const CommandResult first = run_command(fmt::format("{}/first_steps {}/p1/cora.json", examples, d));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("pulled 140 training rows of 1433 features"), std::string::npos) << first.out;

  // GAT as 2 machines on loopback, 3 seeds.
  double mean = 0;
  for (int seed = 0; seed < 3; ++seed) {
    const CommandResult r = run_command(fmt::format(
        "{} launch --ip-config {} --part-config {}/p2/cora.json --num-servers 1 --num-trainers 1 "
        "\"{}/train_gat --seed {} --out {}/gat{}\"",
        tessera, loopback_ip_config(d, 2), d, examples, seed, d, seed));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const nlohmann::json m = final_metrics(r.out);
    ASSERT_TRUE(m.is_object()) << r.out;
    EXPECT_EQ(m["trainers"], 2);
    std::printf("train_gat seed %d: test accuracy %.4f\n", seed, m["test_acc"].get<double>());
    mean += m["test_acc"].get<double>() / 3;
  }
  std::printf("train_gat on Cora, 2 machines, mean of 3 seeds: %.4f\n", mean);
  EXPECT_GE(mean, 0.78);  // DGL's GAT example reports 0.81-0.83 full-graph
}

TEST(Sdk, LearnEmbeddingsBeatsTheMajorityClassOnAFeaturelessGraph) {
  TempDir dir;
  const std::string d = dir.path();
  const std::string p = install(d);
  const std::string examples = build_examples(d, p, "learn_embeddings");
  const std::string tessera = p + "/bin/tessera";
  ASSERT_EQ(run_command(fmt::format("{} gen products-like --nodes 6000 --edges 60000 --classes 8 --seed 1 --out "
                                    "{}/data", tessera, d)).exit_code, 0);
  ASSERT_EQ(run_command(fmt::format("{} partition --input {}/data --graph-name g --num-parts 2 --balance-train "
                                    "--out {}/p2", tessera, d, d)).exit_code, 0);
  // The majority class of the test nodes: what a model without structure scores.
  const Array labels = read_npy(d + "/data/nodes/_N/label.npy");
  const Array test = read_npy(d + "/data/nodes/_N/test.npy");
  std::map<int64_t, int64_t> counts;
  for (int64_t i = 0; i < test.shape()[0]; ++i) ++counts[labels.data<int64_t>()[test.data<int64_t>()[i]]];
  int64_t top = 0;
  for (const auto& [label, n] : counts) top = std::max(top, n);
  const double majority = static_cast<double>(top) / test.shape()[0];

  const CommandResult r = run_command(fmt::format(
      "{} launch --ip-config {} --part-config {}/p2/g.json --num-servers 1 --num-trainers 1 "
      "\"{}/learn_embeddings --num-epochs 5 --out {}/emb\"",
      tessera, loopback_ip_config(d, 2), d, examples, d));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json m = final_metrics(r.out);
  ASSERT_TRUE(m.is_object()) << r.out;
  const double acc = m["test_acc"].get<double>();
  std::printf("learn_embeddings: test accuracy %.4f, majority class %.4f\n", acc, majority);
  EXPECT_GE(acc, majority + 0.2);
  // The learned table: one row per node, in original IDs.
  const Array emb = read_npy(d + "/emb/embeddings.npy");
  EXPECT_EQ(emb.shape(), (std::vector<int64_t>{6000, 64}));
}

}  // namespace
}  // namespace tessera::testing

// `tessera report` end to end: real runs (a 2-machine Cora job through the
// launcher; two standalone runs side by side), the page they make, and that
// page rendered by a real browser (Debian's headless Chromium): the charts
// are drawn, the screenshot is not blank, and nothing comes from the network.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kChromium = "/usr/bin/chromium";

// Headless Chromium with the network out of reach: every request would go to
// a proxy on a closed port, so a page that needed one would fail to draw.
std::string chromium(const std::string& flags, const std::string& page) {
  return fmt::format("{} --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions "
                     "--proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>' --hide-scrollbars "
                     "--virtual-time-budget=10000 {} file://{} 2>/dev/null",
                     kChromium, flags, page);
}

// The attributes the page's script leaves on <body> and on each <figure>.
struct RenderedPage {
  std::string dom;
  int charts = -1, resources = -1, blocked = -1;
  std::string error;
  std::map<std::string, std::pair<int, long>> figures;  // data-chart -> (datasets, painted pixels)
  std::map<std::string, std::string> labels;            // data-chart -> its datasets' labels
  std::map<std::string, std::string> categories;        // data-chart -> its x labels (bar charts)
};

RenderedPage render(const std::string& page) {
  const CommandResult r = run_command(chromium("--dump-dom", page));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  RenderedPage p;
  p.dom = r.out;
  std::smatch m;
  if (std::regex_search(p.dom, m, std::regex("data-charts=\"(\\d+)\""))) p.charts = std::stoi(m[1]);
  if (std::regex_search(p.dom, m, std::regex("data-resources=\"(\\d+)\""))) p.resources = std::stoi(m[1]);
  if (std::regex_search(p.dom, m, std::regex("data-blocked=\"(\\d+)\""))) p.blocked = std::stoi(m[1]);
  if (std::regex_search(p.dom, m, std::regex("data-error=\"([^\"]*)\""))) p.error = m[1];
  const std::regex figure(
      "<figure data-chart=\"([^\"]+)\" data-datasets=\"(\\d+)\" data-labels=\"([^\"]*)\"(?: data-categories=\"[^\"]*\")? data-painted-pixels=\"(\\d+)\"");
  for (auto it = std::sregex_iterator(p.dom.begin(), p.dom.end(), figure); it != std::sregex_iterator(); ++it) {
    p.figures[(*it)[1]] = {std::stoi((*it)[2]), std::stol((*it)[4])};
    p.labels[(*it)[1]] = (*it)[3];
  }
  const std::regex categories("<figure data-chart=\"([^\"]+)\"[^>]* data-categories=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(p.dom.begin(), p.dom.end(), categories); it != std::sregex_iterator(); ++it)
    p.categories[(*it)[1]] = (*it)[2];
  return p;
}

// Distinct colours and the share of non-white pixels in a PNG (Debian's
// Python and PIL, python3-pil: the test reads the image as the browser wrote it).
nlohmann::json image_stats(const std::string& png) {
  const CommandResult r = run_command(fmt::format(
      "/usr/bin/python3 -c \"import json,sys; from PIL import Image; im=Image.open(sys.argv[1]).convert('RGB'); "
      "px=list(im.getdata()); print(json.dumps({{'width':im.width,'height':im.height,"
      "'colours':len(set(px)),'ink':sum(p!=(255,255,255) for p in px)/len(px)}}))\" {}",
      png));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

void expect_no_external_url(const std::string& html) {
  for (const char* scheme : {"http://", "https://", "//cdn", "src=\"//"})
    EXPECT_EQ(html.find(scheme), std::string::npos) << "the page names " << scheme;
}

TEST(Report, CoraOnTwoMachinesDrawsChartsInHeadlessChromium) {
  TESSERA_REQUIRE_SHARED("node/cora", cora);
  ASSERT_TRUE(fs::exists(kChromium)) << "chromium is missing: scripts/install-deps installs it";
  TempDir dir;
  const std::string d = dir.path();
  ASSERT_EQ(run_tessera(fmt::format("partition --input {} --graph-name cora --num-parts 2 --balance-train "
                                    "--balance-edges --out {}/p2", cora, d)).exit_code, 0);
  const CommandResult job = run_command(fmt::format(
      "cd {0} && {1} launch --ip-config {2} --part-config p2/cora.json --num-trainers 1 --run-dir runs/cora "
      "\"{1} train sage --graph-name cora --num-epochs 4 --batch-size 32 --fan-out 5,10 --eval-every 2\"",
      d, TESSERA_BINARY, loopback_ip_config(d, 2)));
  ASSERT_EQ(job.exit_code, 0) << job.out << job.err;

  // What the run left for the report: the trainers' record and metrics, and the launcher's.
  const nlohmann::json run = nlohmann::json::parse(read_file(d + "/runs/cora/run.json"));
  EXPECT_EQ(run["status"], "finished");
  EXPECT_EQ(run["tool"], "train sage");
  EXPECT_EQ(run["trainers"], 2);
  EXPECT_EQ(run["hosts"].size(), 2u);
  EXPECT_EQ(run["config"]["num_epochs"], 4);
  // Two trainers on this host: half its cores over them, at least 1.
  const char* threads = std::getenv("TESSERA_NUM_THREADS");
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_EQ(run["intra_op_threads"], threads != nullptr ? std::atoi(threads) : std::max(1, cores / 2 / 2));
  const nlohmann::json launch = nlohmann::json::parse(read_file(d + "/runs/cora/launch.json"));
  EXPECT_EQ(launch["exit_code"], 0);
  ASSERT_EQ(launch["processes"].size(), 4u);  // a server and a trainer on each machine
  for (const auto& p : launch["processes"]) {
    EXPECT_EQ(p["exit_code"], 0) << p;
    EXPECT_GT(p["peak_rss_mb"].get<double>(), 10) << p;
    EXPECT_GT(p["duration_s"].get<double>(), 0) << p;
  }
  const std::string metrics = read_file(d + "/runs/cora/metrics.jsonl");
  const nlohmann::json first = nlohmann::json::parse(metrics.substr(0, metrics.find('\n')));
  ASSERT_EQ(first["per_trainer"].size(), 2u) << first;
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(first["per_trainer"][rank]["rank"], rank);
    EXPECT_GT(first["per_trainer"][rank]["seeds_per_s"].get<double>(), 0);
    EXPECT_GT(first["per_trainer"][rank]["compute_s"].get<double>(), 0);
    EXPECT_GT(first["per_trainer"][rank]["step_cpu_s"].get<double>(), 0);
  }

  const std::string page = d + "/report.html";
  const CommandResult made = run_tessera(fmt::format("report {}/runs/cora -o {}", d, page));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string html = read_file(page);
  expect_no_external_url(html);

  const RenderedPage rendered = render(page);
  EXPECT_EQ(rendered.error, "");
  EXPECT_GE(rendered.charts, 3) << rendered.dom.substr(0, 2000);
  EXPECT_EQ(rendered.resources, 0) << "the page fetched something";
  EXPECT_EQ(rendered.blocked, 0) << "the page tried to load something its policy refused";
  for (const char* id : {"loss", "accuracy", "time-split-0", "throughput-0", "memory", "partitions-0"}) {
    ASSERT_TRUE(rendered.figures.count(id)) << id;
    EXPECT_GT(rendered.figures.at(id).second, 1000) << id << " painted almost nothing";
  }
  EXPECT_EQ(rendered.figures.at("throughput-0").first, 2);  // one line per trainer
  // The memory chart has a bar for every process of the job, servers included.
  for (const char* process : {"m0/server/0", "m1/server/0", "m0/trainer/0", "m1/trainer/0"})
    EXPECT_NE(rendered.categories.at("memory").find(process), std::string::npos) << rendered.categories.at("memory");

  const std::string png = d + "/report.png";
  ASSERT_EQ(run_command(chromium(fmt::format("--window-size=1280,1600 --screenshot={}", png), page)).exit_code, 0);
  const nlohmann::json image = image_stats(png);
  ASSERT_TRUE(image.is_object());
  EXPECT_EQ(image["width"], 1280);
  EXPECT_GT(image["colours"].get<int>(), 20) << "a blank or one-colour screenshot";
  EXPECT_GT(image["ink"].get<double>(), 0.02);
}

TEST(Report, TwoRunsOverlayTheirCurves) {
  ASSERT_TRUE(fs::exists(kChromium)) << "chromium is missing: scripts/install-deps installs it";
  TempDir dir;
  const std::string d = dir.path();
  ASSERT_EQ(run_tessera(fmt::format("gen products-like --nodes 3000 --edges 30000 --feat-dim 16 --out {}/g", d))
                .exit_code, 0);
  ASSERT_EQ(run_tessera(fmt::format("partition --input {0}/g --num-parts 1 --graph-name g --out {0}/p1", d)).exit_code, 0);
  for (const char* lr : {"0.01", "0.001"}) {
    const CommandResult r = run_tessera(fmt::format(
        "train sage --standalone --part-config {0}/p1/g.json --num-epochs 3 --batch-size 200 --fan-out 5,5 "
        "--lr {1} --out {0}/lr{1}", d, lr));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const std::string page = d + "/both.html";
  const CommandResult made = run_tessera(fmt::format("report {0}/lr0.01 {0}/lr0.001 -o {1}", d, page));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(made.err.find("no launch.json"), std::string::npos) << "standalone runs say what they lack";
  const RenderedPage rendered = render(page);
  EXPECT_EQ(rendered.error, "");
  ASSERT_TRUE(rendered.figures.count("loss"));
  EXPECT_EQ(rendered.figures.at("loss").first, 2) << "one loss curve per run";
  EXPECT_EQ(rendered.figures.at("accuracy").first, 6) << "train, validation and test accuracy per run";
  // Each run keeps its own time split, in its own section.
  EXPECT_TRUE(rendered.figures.count("time-split-0") && rendered.figures.count("time-split-1"));
  EXPECT_NE(rendered.labels.at("loss").find("lr0.001 loss"), std::string::npos) << rendered.labels.at("loss");
  EXPECT_NE(rendered.labels.at("loss").find("lr0.01 loss"), std::string::npos) << rendered.labels.at("loss");
}

// Folders a report meets in practice, written by hand (no training): a KGE run,
// a KGE run with only its final record, a launcher's record alone, a node run
// from before per-trainer records with a half-written last line (given with a
// trailing slash), and a run whose trainers were killed. All in one page: it
// must draw without a script error, KGE steps apart from node epochs.
TEST(Report, UnusualRunFoldersDrawWithoutErrors) {
  ASSERT_TRUE(fs::exists(kChromium)) << "chromium is missing: scripts/install-deps installs it";
  TempDir dir;
  const std::string d = dir.path();
  auto write = [&](const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(d + "/" + path).parent_path());
    std::ofstream(d + "/" + path) << text;
  };
  const std::string worker = R"("per_trainer": [{"rank": 0, "worker": 0, "process": "standalone", "steps_per_s": 90,
      "sample_s": 0.1, "pull_s": 0.2, "compute_s": 1.0, "push_s": 0.1, "peak_rss_mb": 150},
      {"rank": 0, "worker": 1, "process": "standalone", "steps_per_s": 80, "sample_s": 0.1, "pull_s": 0.2,
      "compute_s": 1.1, "push_s": 0.1, "peak_rss_mb": 150}])";
  write("kge/run.json", R"({"tool": "kge train", "status": "finished", "trainers": 1})");
  std::string kge_metrics;
  for (int step = 100; step <= 300; step += 100) {
    std::string record = fmt::format(R"({{"step": {}, "loss": {}, {}}})", step, 1.0 / step, worker);
    record.erase(std::remove(record.begin(), record.end(), '\n'), record.end());
    kge_metrics += record + "\n";
  }
  kge_metrics += R"({"step": 300, "valid_mrr": 0.3})" "\n" R"({"steps": 300, "test_mrr": 0.31, "peak_rss_mb": 150})" "\n";
  write("kge/metrics.jsonl", kge_metrics);
  write("kge-final/run.json", R"({"tool": "kge train", "status": "finished"})");
  write("kge-final/metrics.jsonl", R"({"steps": 500, "test_mrr": 0.4})" "\n");
  write("launch-only/launch.json", R"({"exit_code": 0, "workspace": "/nowhere", "part_config": "p/g.json",
      "processes": [{"label": "m0/server/0", "role": "server", "host": "127.0.0.1", "exit_code": 0, "peak_rss_mb": 90},
                    {"label": "m1/trainer/0@h1", "role": "trainer", "host": "h1", "exit_code": 0, "peak_rss_mb": null}]})");
  write("old/metrics.jsonl", "{\"epoch\": 0, \"loss\": 2.0, \"train_acc\": 0.1, \"per_trainer\": []}\n"
                             "{\"epoch\": 1, \"loss\": 1.0, \"train_acc\": 0.5}\n{\"epoch\": 2, \"lo");
  write("killed/run.json", R"({"tool": "train sage", "status": "running", "trainers": 2})");
  write("killed/metrics.jsonl", "{\"epoch\": 0, \"loss\": 2.0}\n");
  write("killed/launch.json", R"({"exit_code": 137, "processes": []})");

  const std::string page = d + "/all.html";
  const CommandResult made = run_tessera(fmt::format("report {0}/kge {0}/kge-final {0}/launch-only {0}/old/ {0}/killed "
                                                     "-o {1}", d, page));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(made.err.find("launch-only: partition config /nowhere/p/g.json is not on this machine"), std::string::npos)
      << made.err;
  const RenderedPage rendered = render(page);
  EXPECT_EQ(rendered.error, "");
  EXPECT_EQ(rendered.charts, static_cast<int>(rendered.figures.size()));
  // Node epochs and KGE steps on charts of their own.
  ASSERT_TRUE(rendered.figures.count("loss") && rendered.figures.count("loss-kge"));
  EXPECT_EQ(rendered.labels.at("loss"), "old loss | killed loss");  // the folder given as "old/" keeps its name
  EXPECT_EQ(rendered.labels.at("loss-kge"), "kge loss | kge-final loss");
  EXPECT_NE(rendered.labels.at("accuracy-kge").find("kge-final test MRR"), std::string::npos);
  // One memory bar per process: the KGE workers share theirs; the remote trainer has no figure.
  EXPECT_EQ(rendered.categories.at("memory"), "standalone | m0/server/0");
  EXPECT_NE(rendered.dom.find("did not finish"), std::string::npos);
  EXPECT_EQ(rendered.blocked, 0);
}

TEST(Report, BadRunFoldersAreClearErrors) {
  TempDir dir;
  const std::string d = dir.path();
  CommandResult r = run_tessera(fmt::format("report {}/nowhere -o {}/r.html", d, d));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nowhere: not a folder"), std::string::npos) << r.err;
  fs::create_directories(d + "/empty");
  r = run_tessera(fmt::format("report {0}/empty -o {0}/r.html", d));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not the folder of a Tessera run"), std::string::npos) << r.err;
  fs::create_directories(d + "/bad");
  std::ofstream(d + "/bad/metrics.jsonl") << "{\"epoch\": 0, \"loss\": 1}\n{oops\n{\"epoch\": 1, \"loss\": 0.5}\n";
  r = run_tessera(fmt::format("report {0}/bad -o {0}/r.html", d));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("metrics.jsonl:2: invalid JSON"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d + "/r.html")) << "no page from a failed report";
  fs::create_directories(d + "/array");
  std::ofstream(d + "/array/metrics.jsonl") << "{\"epoch\": 0, \"loss\": 1}\n[1, 2]\n";
  r = run_tessera(fmt::format("report {0}/array -o {0}/r.html", d));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("metrics.jsonl:2: expected a JSON object, found array"), std::string::npos) << r.err;
  fs::create_directories(d + "/run-string");
  std::ofstream(d + "/run-string/run.json") << "\"finished\"\n";
  r = run_tessera(fmt::format("report {0}/run-string -o {0}/r.html", d));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("run.json: expected a JSON object, found string"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d + "/r.html"));
  fs::create_directories(d + "/good");
  std::ofstream(d + "/good/metrics.jsonl") << "{\"epoch\": 0, \"loss\": 1}\n";
  r = run_tessera(fmt::format("report {0}/good -o {0}/r.html --chart-js {0}/missing.js", d));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("missing.js: install Debian's libjs-chart.js"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tessera::testing

// DGL-KE's data and inference command lines with `tessera kge` in front: a
// user's own dataset given by --format raw_udd_<order> / udd_<order> and
// --data_files trains; `kge predict` and `kge emb_sim` answer on FB15k-237
// embeddings exactly as a brute-force ranking written here (plain loops over
// the saved .npy tables) does; bad flags are refused with the reason.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tessera/io/npy.h"
#include "test_util.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

// One row of a result file: the objects (IDs or names) and the score.
struct ResultRow {
  std::vector<std::string> objects;
  double score = 0;
};

std::vector<ResultRow> read_result(const std::string& path, std::string* header) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::getline(in, *header);
  std::vector<ResultRow> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, '\t');) fields.push_back(f);
    ResultRow row;
    row.score = std::stod(fields.back());
    fields.pop_back();
    row.objects = fields;
    rows.push_back(row);
  }
  return rows;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path);
  for (const auto& l : lines) out << l << "\n";
}

// A [rows, dim] float table from a .npy file, as plain numbers.
struct Table {
  int64_t rows = 0, dim = 0;
  std::vector<float> v;
  const float* row(int64_t i) const { return v.data() + i * dim; }
};

Table load(const std::string& path) {
  const Array a = read_npy(path);
  Table t;
  t.rows = a.dim(0);
  t.dim = a.dim(1);
  t.v.assign(a.data<float>(), a.data<float>() + t.rows * t.dim);
  return t;
}

// TransE_l2 with gamma 0, as dglke_predict scores with --score_func none.
double transe_l2(const Table& e, const Table& r, int64_t h, int64_t rel, int64_t t) {
  double sum = 0;
  for (int64_t k = 0; k < e.dim; ++k) {
    const double d = e.row(h)[k] + r.row(rel)[k] - e.row(t)[k];
    sum += d * d;
  }
  return -std::sqrt(sum);
}

struct Scored {
  double score;
  std::vector<int64_t> ids;
};

// The k best of `all` (higher first, or lower first for distances).
std::vector<Scored> best(std::vector<Scored> all, size_t k, bool lower_first = false) {
  std::sort(all.begin(), all.end(), [&](const Scored& a, const Scored& b) {
    return lower_first ? a.score < b.score : a.score > b.score;
  });
  all.resize(std::min(k, all.size()));
  return all;
}

// The k best of `all` for each of `keys` in turn, by the ID in `column`: batch_* modes.
std::vector<Scored> best_per(const std::vector<Scored>& all, int column, const std::vector<int64_t>& keys, size_t k) {
  std::vector<Scored> out;
  for (int64_t key : keys) {
    std::vector<Scored> mine;
    for (const Scored& s : all)
      if (s.ids[column] == key) mine.push_back(s);
    for (const Scored& s : best(mine, k)) out.push_back(s);
  }
  return out;
}

void expect_same(const std::vector<ResultRow>& got, const std::vector<Scored>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    std::vector<std::string> ids;
    for (int64_t id : want[i].ids) ids.push_back(std::to_string(id));
    EXPECT_EQ(got[i].objects, ids) << what << " row " << i;
    EXPECT_NEAR(got[i].score, want[i].score, 1e-3 * std::max(1.0, std::abs(want[i].score))) << what << " row " << i;
  }
}

// FB15k-237 embeddings, trained briefly: the inference tools need real tables, not good ones.
std::string train_fb15k237(const std::string& data, const TempDir& dir) {
  const std::string out = dir / "ckpts";
  const CommandResult r = run_tessera(fmt::format(
      "kge train --data_path {} --dataset FB15k-237 --model_name TransE_l2 --hidden_dim 16 --batch_size 256 "
      "--neg_sample_size 64 --max_step 100 --log_interval 100 --save_path {}",
      fs::path(data).parent_path().string(), out));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return out;
}

TEST(KgePredict, MatchesABruteForceRankingOnFB15k237) {
  TESSERA_REQUIRE_SHARED("kg/FB15k-237", data);
  TempDir dir;
  const std::string model = train_fb15k237(data, dir);
  const Table e = load(model + "/FB15k-237_TransE_l2_entity.npy");
  const Table r = load(model + "/FB15k-237_TransE_l2_relation.npy");
  ASSERT_EQ(e.rows, 14541);
  const std::vector<int64_t> heads = {0, 17, 4000}, rels = {3, 100}, tails = {5, 6, 7000};
  auto ids = [](const std::vector<int64_t>& v) {
    std::vector<std::string> s;
    for (int64_t x : v) s.push_back(std::to_string(x));
    return s;
  };
  write_lines(dir / "head.list", ids(heads));
  write_lines(dir / "rel.list", ids(rels));
  write_lines(dir / "tail.list", ids(tails));
  std::string header;

  // h_r_*, all: the 5 best of 3 x 2 x every tail.
  CommandResult c = run_tessera(fmt::format("kge predict --model_path {0} --format 'h_r_*' --data_files {1} {2} "
                                            "--topK 5 --output {3}",
                                            model, dir / "head.list", dir / "rel.list", dir / "all.tsv"));
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  std::vector<Scored> all;
  for (int64_t h : heads)
    for (int64_t rel : rels)
      for (int64_t t = 0; t < e.rows; ++t) all.push_back({transe_l2(e, r, h, rel, t), {h, rel, t}});
  expect_same(read_result(dir / "all.tsv", &header), best(all, 5), "h_r_* all");
  EXPECT_EQ(header, "head\trel\ttail\tscore");

  // batch_head: 4 per head, heads in list order.
  c = run_tessera(fmt::format("kge predict --model_path {0} --format 'h_r_*' --data_files {1} {2} --topK 4 "
                              "--exec_mode batch_head --output {3}",
                              model, dir / "head.list", dir / "rel.list", dir / "batch.tsv"));
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  expect_same(read_result(dir / "batch.tsv", &header), best_per(all, 0, heads, 4), "batch_head");

  // *_r_t, batch_tail: the heads are every entity; 3 per tail.
  c = run_tessera(fmt::format("kge predict --model_path {0} --format '*_r_t' --data_files {1} {2} --topK 3 "
                              "--exec_mode batch_tail --output {3}",
                              model, dir / "rel.list", dir / "tail.list", dir / "tail.tsv"));
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  std::vector<Scored> every_head;
  for (int64_t h = 0; h < e.rows; ++h)
    for (int64_t rel : rels)
      for (int64_t t : tails) every_head.push_back({transe_l2(e, r, h, rel, t), {h, rel, t}});
  expect_same(read_result(dir / "tail.tsv", &header), best_per(every_head, 2, tails, 3), "*_r_t batch_tail");

  // triplet_wise with logsigmoid: log(sigmoid(gamma - distance)), gamma 12 as trained.
  write_lines(dir / "h3.list", {"0", "17", "4000"});
  write_lines(dir / "r3.list", {"3", "100", "3"});
  c = run_tessera(fmt::format("kge predict --model_path {0} --format h_r_t --data_files {1} {2} {3} "
                              "--exec_mode triplet_wise --score_func logsigmoid --output {4}",
                              model, dir / "h3.list", dir / "r3.list", dir / "tail.list", dir / "tw.tsv"));
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  std::vector<Scored> triplets;
  for (int i = 0; i < 3; ++i) {
    const int64_t h = heads[i], rel = i == 1 ? 100 : 3, t = tails[i];
    const double x = 12 + transe_l2(e, r, h, rel, t);
    triplets.push_back({-std::log1p(std::exp(-x)), {h, rel, t}});
  }
  expect_same(read_result(dir / "tw.tsv", &header), best(triplets, 10), "triplet_wise logsigmoid");

  // --raw_data: names in, names out, through the entities.tsv / relations.tsv training wrote.
  std::vector<std::string> names(e.rows), relation_names(r.rows);
  {
    std::ifstream in(model + "/entities.tsv");
    for (std::string id, name; std::getline(in, id, '\t') && std::getline(in, name);) names[std::stoll(id)] = name;
    std::ifstream rin(model + "/relations.tsv");
    for (std::string id, name; std::getline(rin, id, '\t') && std::getline(rin, name);)
      relation_names[std::stoll(id)] = name;
  }
  write_lines(dir / "raw_head.list", {names[0], names[17], names[4000]});
  write_lines(dir / "raw_rel.list", {relation_names[3], relation_names[100]});
  c = run_tessera(fmt::format("kge predict --model_path {0} --format 'h_r_*' --data_files {1} {2} --raw_data "
                              "--topK 5 --output {3}",
                              model, dir / "raw_head.list", dir / "raw_rel.list", dir / "raw.tsv"));
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  const std::vector<ResultRow> raw = read_result(dir / "raw.tsv", &header);
  const std::vector<Scored> want = best(all, 5);
  ASSERT_EQ(raw.size(), want.size());
  for (size_t i = 0; i < raw.size(); ++i)
    EXPECT_EQ(raw[i].objects, (std::vector<std::string>{names[want[i].ids[0]], relation_names[want[i].ids[1]],
                                                        names[want[i].ids[2]]}));
}

TEST(KgeEmbSim, MatchesABruteForceRankingOnFB15k237) {
  TESSERA_REQUIRE_SHARED("kg/FB15k-237", data);
  TempDir dir;
  const std::string model = train_fb15k237(data, dir);
  const std::string emb_file = model + "/FB15k-237_TransE_l2_entity.npy";
  const Table e = load(emb_file);
  write_lines(dir / "left.list", {"0", "12", "9000"});
  write_lines(dir / "right.list", {"1", "12", "13", "14000"});
  auto dot = [&](int64_t a, int64_t b) {
    double s = 0;
    for (int64_t k = 0; k < e.dim; ++k) s += double(e.row(a)[k]) * e.row(b)[k];
    return s;
  };
  auto l1 = [&](int64_t a, int64_t b) {
    double s = 0;
    for (int64_t k = 0; k < e.dim; ++k) s += std::abs(double(e.row(a)[k]) - e.row(b)[k]);
    return s;
  };
  auto cosine = [&](int64_t a, int64_t b) { return dot(a, b) / std::sqrt(dot(a, a) * dot(b, b)); };
  auto l2 = [&](int64_t a, int64_t b) { return std::sqrt(std::max(0.0, dot(a, a) + dot(b, b) - 2 * dot(a, b))); };
  auto jaccard = [&](int64_t a, int64_t b) { return dot(a, b) / (dot(a, a) + dot(b, b) - dot(a, b)); };
  std::string header;

  // l_*, batch_left, every similarity: 5 per left object against every row.
  const std::vector<int64_t> left = {0, 12, 9000};
  struct Func {
    const char* name;
    std::function<double(int64_t, int64_t)> f;
    bool distance;
  };
  for (const Func& func : {Func{"cosine", cosine, false}, Func{"l2", l2, true}, Func{"l1", l1, true},
                           Func{"dot", dot, false}, Func{"ext_jaccard", jaccard, false}}) {
    const std::string out = dir / (std::string(func.name) + ".tsv");
    const CommandResult c = run_tessera(fmt::format("kge emb_sim --emb_file {} --format 'l_*' --data_files {} "
                                                    "--sim_func {} --topK 5 --exec_mode batch_left --output {}",
                                                    emb_file, dir / "left.list", func.name, out));
    ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
    std::vector<Scored> want;
    for (int64_t a : left) {
      std::vector<Scored> mine;
      for (int64_t b = 0; b < e.rows; ++b) mine.push_back({func.f(a, b), {a, b}});
      for (const Scored& s : best(mine, 5, func.distance)) want.push_back(s);
    }
    expect_same(read_result(out, &header), want, func.name);
    EXPECT_EQ(header, "left\tright\tscore");
  }

  // l_r, all: the 4 most similar of the 3 x 4 pairs; pairwise: 3 pairs.
  CommandResult c = run_tessera(fmt::format("kge emb_sim --emb_file {} --format l_r --data_files {} {} --topK 4 "
                                            "--output {}",
                                            emb_file, dir / "left.list", dir / "right.list", dir / "lr.tsv"));
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  std::vector<Scored> pairs;
  for (int64_t a : left)
    for (int64_t b : {1, 12, 13, 14000}) pairs.push_back({cosine(a, b), {a, b}});
  expect_same(read_result(dir / "lr.tsv", &header), best(pairs, 4), "l_r all");

  write_lines(dir / "right3.list", {"1", "12", "13"});
  c = run_tessera(fmt::format("kge emb_sim --emb_file {} --format l_r --data_files {} {} --exec_mode pairwise "
                              "--sim_func l2 --output {}",
                              emb_file, dir / "left.list", dir / "right3.list", dir / "pw.tsv"));
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  expect_same(read_result(dir / "pw.tsv", &header), best({{l2(0, 1), {0, 1}}, {l2(12, 12), {12, 12}}, {l2(9000, 13), {9000, 13}}}, 10, true),
              "pairwise l2");
}

// DGL-KE's user-defined formats: raw names in a column order and delimiter of
// the user's choosing, and KGE IDs with their maps, both from --data_files.
TEST(KgeData, UserDefinedFormatsTrainFromDataFiles) {
  TESSERA_REQUIRE_SHARED("kg/kinship", data);
  TempDir dir;
  // kinship as "head,tail,relation" CSV under names of the user's own.
  for (const char* split : {"train", "valid", "test"}) {
    std::ifstream in(data + "/" + split + ".txt");
    std::ofstream out(dir / (std::string("my_") + split + ".csv"));
    for (std::string h, r, t; std::getline(in, h, '\t') && std::getline(in, r, '\t') && std::getline(in, t);)
      out << h << "," << t << "," << r << "\n";
  }
  const std::string flags =
      "--model_name DistMult --hidden_dim 128 --lr 0.1 --batch_size 256 --neg_sample_size 64 -adv --log_interval 500 "
      "--test --seed 1 --max_step 1500 --num_proc 2";
  CommandResult c = run_tessera(fmt::format("kge train --data_path {0} --dataset mykin --format raw_udd_htr "
                                            "--data_files my_train.csv my_valid.csv my_test.csv --delimiter , {1} "
                                            "--save_path {0}/raw",
                                            dir.path(), flags));
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  nlohmann::json m = final_metrics(c.out);
  EXPECT_EQ(m["test_queries"], 2 * 1074);
  EXPECT_GT(m["test_mrr"].get<double>(), 0.4) << "kinship read in another order should learn as well";
  EXPECT_TRUE(fs::exists(dir / "raw/mykin_DistMult_entity.npy"));
  EXPECT_EQ(read_npy(dir / "raw/mykin_DistMult_entity.npy").dim(0), 104);

  // kge eval reads the same files. Degree-proportional candidates come on top of the uniform ones: twice the
  // candidates (the frequent entities among them), so the raw mean rank grows.
  const std::string eval = fmt::format("kge eval --data_path {0} --dataset mykin --format raw_udd_htr --data_files "
                                       "my_train.csv my_valid.csv my_test.csv --delimiter , --model_path {0}/raw "
                                       "--neg_sample_size_eval 20 --no_eval_filter --num_test_proc 2",
                                       dir.path());
  c = run_tessera(eval);
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  const double uniform_mr = final_metrics(c.out)["test_mr"].get<double>();
  EXPECT_LE(uniform_mr, 21);
  c = run_tessera(eval + " --neg_deg_sample_eval");
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  const double degree_mr = final_metrics(c.out)["test_mr"].get<double>();
  EXPECT_LE(degree_mr, 41);
  EXPECT_GT(degree_mr, uniform_mr * 1.3) << "the degree-proportional half was not added";
  // dglke_eval's line repeats the model flags: the same as config.json's run, others are refused.
  c = run_tessera(eval + " --model_name DistMult --hidden_dim 128 --num_proc 1 --gpu -1");
  EXPECT_EQ(c.exit_code, 0) << c.err;
  c = run_tessera(eval + " --model_name ComplEx");
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_NE(c.err.find("config.json says the embeddings are DistMult"), std::string::npos) << c.err;
  c = run_tessera(eval + " --hidden_dim 64");
  EXPECT_NE(c.err.find("--hidden_dim 64: "), std::string::npos) << c.err;

  // udd with '|' and the maps first: entities.tsv / relations.tsv from the run above are "id<TAB>name".
  std::ofstream(dir / "ents.txt") << "0|a\n1|b\n2|c\n";
  std::ofstream(dir / "rels.txt") << "0|likes\n1|knows\n";
  std::ofstream(dir / "tr.txt") << "0|0|1\n1|1|2\n2|0|0\n0|1|2\n";
  c = run_tessera(fmt::format("kge train --data_path {0} --format udd_hrt --data_files ents.txt rels.txt tr.txt "
                              "--delimiter '|' --hidden_dim 8 --batch_size 2 --neg_sample_size 2 --max_step 5 "
                              "--save_path {0}/udd --rel_part --mix_cpu_gpu --async_update --gpu -1",
                              dir.path()));
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  const nlohmann::json config = nlohmann::json::parse(read_file(dir / "udd/config.json"));
  EXPECT_EQ(config["n_entities"], 3);
  EXPECT_EQ(config["n_relations"], 2);
}

TEST(KgeData, BadDataFlagsAreRefusedWithTheReason) {
  TempDir dir;
  std::ofstream(dir / "t.csv") << "a,r,b\nb,r\n";
  const std::string base = "kge train --data_path " + dir.path() + " --save_path " + dir / "out";
  expect_tessera_error(base + " --format raw_udd_hrt --data_files t.csv t.csv", "takes 1 or 3 --data_files");
  expect_tessera_error(base + " --format raw_udd_hrt --data_files nope.csv", "nope.csv is not in");
  expect_tessera_error(base + " --format raw_udd_hrt --data_files t.csv --delimiter , ", "t.csv:2: expected 'head,relation,tail'");
  expect_tessera_error(base + " --format raw_udd_hxt --data_files t.csv", "must order the letters h, r and t");
  expect_tessera_error(base + " --format raw_udd_hrt --data_files t.csv --delimiter ::", "expected one character");
  expect_tessera_error(base + " --format built_in --data_files t.csv", "--data_files goes with --format raw_udd");
  expect_tessera_error(base + " --format udd_hrt --data_files t.csv", "takes 3 or 5 --data_files");
  expect_tessera_error(base + " --format raw_udd_hrt --data_files t.csv --has_edge_importance",
                 "edge importance is not supported");
  expect_tessera_error(base + " --format raw_udd_hrt --data_files t.csv --gpu 0 1", "Tessera's KGE runs on the CPU");
  expect_tessera_error(base + " --neg_sample_size_eval 10 --neg_deg_sample_eval",
                       "--neg_deg_sample_eval needs --no_eval_filter");
  expect_tessera_error(base + " --neg_deg_sample_eval --no_eval_filter", "give --neg_sample_size_eval N");
  expect_tessera_error(base + " --num_test_proc -1", "--num_test_proc must be at least 1");
  expect_tessera_error(base + " -log 0", "--log_interval must be at least 1");
  expect_tessera_error("kge predict --model_path " + dir.path() + " --format h_r_x", "--format 'h_r_x': expected one of");
  expect_tessera_error("kge predict --model_path " + dir.path() + " --format 'h_r_*' --data_files t.csv",
                 "--format h_r_* takes 2 --data_files");
  expect_tessera_error("kge predict --model_path " + dir.path() + " --format 'h_r_*' --exec_mode sideways",
                 "--exec_mode 'sideways'");
  expect_tessera_error("kge predict --model_path " + dir.path() + " --format '*_*_t' --data_files t.csv --gpu 0",
                 "Tessera's KGE runs on the CPU");
  expect_tessera_error("kge predict --model_path " + dir.path() + " --format '*_*_t' --data_files t.csv",
                 "config.json: cannot open");
  expect_tessera_error("kge emb_sim --emb_file " + dir / "t.csv" + " --format '*' --sim_func manhattan", "--sim_func 'manhattan'");
  expect_tessera_error("kge emb_sim --emb_file " + dir / "t.csv" + " --format '*'", "t.csv");
  expect_tessera_error("kge emb_sim --emb_file " + dir / "t.csv" + " --format 'l_*' --data_files t.csv --raw_data",
                 "--raw_data needs --mfile");
}

}  // namespace
}  // namespace tessera::testing

namespace tessera::testing {
namespace {

// DGL-KE's distributed tutorial, command for command with `tessera kge` in
// front: FB15k-237 for FB15k, two local machines in the ip_config, one
// client process each (the tutorial's 16 would oversubscribe 2 cores).
TEST(KgeDistTrain, DglKeTutorialRunsOnTwoLocalMachines) {
  TESSERA_REQUIRE_SHARED("kg/FB15k-237", data);
  TempDir dir;
  const std::string task = dir / "my_task";
  fs::create_directories(task);
  fs::create_directory_symlink(data, task + "/FB15k-237");
  CommandResult c = run_tessera(fmt::format("kge partition --dataset FB15k-237 -k 2 --data_path {}", task));
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  const int base = free_port_block(6);
  std::ofstream(task + "/ip_config.txt") << fmt::format("127.0.0.1 {} 1\n127.0.0.1 {} 1\n", base, base + 3);
  c = run_tessera(fmt::format(
      "kge dist_train --path {0} --ip_config {0}/ip_config.txt --num_client_proc 1 --model_name TransE_l2 "
      "--dataset FB15k-237 --data_path {0} --hidden_dim 400 --gamma 19.9 --lr 0.25 --batch_size 1000 "
      "--neg_sample_size 200 --max_step 500 --log_interval 100 --batch_size_eval 16 --test -adv "
      "--regularization_coef 1.00E-09 --num_thread 1",
      task));
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  const nlohmann::json m = final_metrics(c.out);
  ASSERT_TRUE(m.is_object()) << c.out;
  EXPECT_EQ(m["trainers"], 2);
  // 14,541 entities: a random ranking has MRR ~0.0005; 500 steps already learn.
  EXPECT_GT(m["test_mrr"].get<double>(), 0.05) << m;
  EXPECT_EQ(m["test_queries"], 2 * 20466);
  EXPECT_EQ(read_npy(task + "/ckpts/FB15k-237_TransE_l2_entity.npy").shape(), (std::vector<int64_t>{14541, 400}));
  EXPECT_TRUE(fs::exists(task + "/ckpts/config.json"));
  EXPECT_TRUE(fs::exists(task + "/ckpts/launch.json"));

  // What cannot run is refused before anything starts.
  c = run_tessera(fmt::format("kge dist_train --path {0} --ip_config {0}/ip_config.txt --dataset FB15k-237 "
                              "--model_name TransQ", task));
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_NE(c.err.find("unknown model 'TransQ'"), std::string::npos) << c.err;
  c = run_tessera(fmt::format("kge dist_train --path {0} --ip_config {0}/ip_config.txt --dataset FB15k-237 "
                              "--no_such_flag 3", task));
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_NE(c.err.find("--no_such_flag"), std::string::npos) << c.err;
  c = run_tessera(fmt::format("kge dist_train --path {0} --ip_config {0}/ip_config.txt --dataset WN18", task));
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_NE(c.err.find("no partitions at"), std::string::npos) << c.err;
}

}  // namespace
}  // namespace tessera::testing

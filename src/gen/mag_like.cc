// A heterogeneous academic graph shaped like ogbn-mag: papers, authors,
// institutions and fields of study; cites / writes / affiliated_with /
// has_topic in ogbn-mag's proportions; features and venue labels on papers
// only; a time split by publication year (train <= 2017, val 2018, test 2019).
// Every node has a planted class and edges prefer same-class endpoints, so the
// featureless types carry signal a model can learn through embeddings.
#include <cmath>

#include "gen_common.h"
#include "tessera/gen/generators.h"
#include "tessera/base/error.h"

namespace tessera {
namespace {

// ogbn-mag's sizes.
constexpr int64_t kAuthors = 1134649, kFields = 59965, kInstitutions = 8740, kPapers = 736389;
constexpr int64_t kAffiliated = 1043998, kWrites = 7145660, kCites = 5416271, kHasTopic = 7505078;
constexpr int64_t kMagNodes = kAuthors + kFields + kInstitutions + kPapers;
constexpr int64_t kMagEdges = kAffiliated + kWrites + kCites + kHasTopic;
constexpr double kHomophily = 0.8;

struct TypeModel {
  std::vector<int64_t> cls;
  std::vector<std::vector<int64_t>> members;  // by class
  AliasTable any;
  std::vector<AliasTable> within;  // by class

  TypeModel(int64_t n, int64_t classes, uint64_t seed, uint64_t stream)
      : cls(skewed_classes(n, classes, seed, stream)), members(classes), within(classes) {
    const std::vector<double> activity = powerlaw_activity(n, seed, stream + 100);
    any = AliasTable(activity);
    for (int64_t i = 0; i < n; ++i) members[cls[i]].push_back(i);
    for (int64_t c = 0; c < classes; ++c) {
      std::vector<double> w;
      for (int64_t i : members[c]) w.push_back(activity[i]);
      if (!w.empty()) within[c] = AliasTable(w);
    }
  }
  int64_t draw(Rng& rng) const { return any.sample(rng); }
  // A node of class c (most of the time), else any node.
  int64_t draw_near(Rng& rng, int64_t c) const {
    if (rng.uniform() < kHomophily && !members[c].empty()) return members[c][within[c].sample(rng)];
    return any.sample(rng);
  }
};

int64_t scaled(int64_t full, int64_t total, int64_t full_total) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::llround(static_cast<double>(full) * total / full_total)));
}

}  // namespace

Dataset generate_mag_like(const GenOptions& o) {
  const int64_t n = o.nodes ? o.nodes : kMagNodes;
  const int64_t m = o.edges ? o.edges : kMagEdges;
  const int64_t classes = o.classes ? o.classes : 349;
  const int64_t dim = o.feat_dim ? o.feat_dim : 128;
  if (n < 8) fail("mag-like needs at least 8 nodes");
  const int64_t authors = scaled(kAuthors, n, kMagNodes), fields = scaled(kFields, n, kMagNodes);
  const int64_t institutions = scaled(kInstitutions, n, kMagNodes);
  const int64_t papers = std::max<int64_t>(2, n - authors - fields - institutions);

  TypeModel paper(papers, classes, o.seed, 1), author(authors, classes, o.seed, 2);
  TypeModel field(fields, classes, o.seed, 3), institution(institutions, classes, o.seed, 4);

  Dataset d;
  d.name = "mag-like";
  for (auto [name, count] : {std::pair{"author", authors}, {"field_of_study", fields}, {"institution", institutions},
                             {"paper", papers}})
    d.node_types.push_back(NodeType{name, count, {}, {}, {}, {}, {}});

  auto add_edges = [&](const char* src, const char* rel, const char* dst, int64_t full, uint64_t stream,
                       const EdgeDraw& draw) {
    EdgeType e{src, rel, dst, {}, {}, {}};
    generate_unique_edges(scaled(full, m, kMagEdges), false, o.seed, stream, draw, &e.src, &e.dst);
    d.edge_types.push_back(std::move(e));
  };
  // generate_unique_edges drops u == v as a self-loop, which is only right
  // within one type; across types u == v is a legal edge, so destinations are
  // drawn shifted by 2^31 and shifted back below.
  constexpr int64_t kOther = int64_t{1} << 31;
  add_edges("author", "affiliated_with", "institution", kAffiliated, 10, [&](Rng& rng, int64_t* u, int64_t* v) {
    *u = author.draw(rng);
    *v = institution.draw_near(rng, author.cls[*u]) + kOther;
  });
  add_edges("author", "writes", "paper", kWrites, 11, [&](Rng& rng, int64_t* u, int64_t* v) {
    *u = author.draw(rng);
    *v = paper.draw_near(rng, author.cls[*u]) + kOther;
  });
  add_edges("paper", "cites", "paper", kCites, 12, [&](Rng& rng, int64_t* u, int64_t* v) {
    *u = paper.draw(rng);
    *v = paper.draw_near(rng, paper.cls[*u]);
  });
  add_edges("paper", "has_topic", "field_of_study", kHasTopic, 13, [&](Rng& rng, int64_t* u, int64_t* v) {
    *u = paper.draw(rng);
    *v = field.draw_near(rng, paper.cls[*u]) + kOther;
  });
  for (EdgeType& e : d.edge_types) {
    if (e.src_type == e.dst_type) continue;
    int64_t* v = e.dst.data<int64_t>();
    for (int64_t i = 0; i < e.count(); ++i) v[i] -= kOther;
  }

  NodeType& p = d.node_types[3];
  p.data["feat"] = class_features(&paper.cls, papers, dim, classes, 0.3, o.seed, 20);
  p.data["label"] = Array::from_vector(paper.cls);
  // Years 2010..2019 weighted towards recent ones, matching ogbn-mag's split
  // sizes (about 85% / 9% / 6%).
  Array year = Array::zeros(DType::kInt64, {papers});
  std::vector<int64_t> train, val, test;
  Rng rng(o.seed, 21);
  for (int64_t i = 0; i < papers; ++i) {
    const double r = rng.uniform();
    const int64_t y = r < 0.057 ? 2019 : r < 0.145 ? 2018 : 2010 + static_cast<int64_t>(rng.below(8));
    year.data<int64_t>()[i] = y;
    (y <= 2017 ? train : y == 2018 ? val : test).push_back(i);
  }
  p.data["year"] = year;
  p.train = Array::from_vector(train);
  p.val = Array::from_vector(val);
  p.test = Array::from_vector(test);
  return d;
}

}  // namespace tessera

#include "partition/inspect.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tessera/io/npy.h"
#include "tessera/partition/partition_config.h"
#include "tessera/base/error.h"

namespace tessera {
namespace {

// Marks IDs seen across partitions to prove a map is a bijection onto [0, n).
class Coverage {
 public:
  Coverage(int64_t n, std::string what) : seen_(n, 0), what_(std::move(what)) {}
  void mark(int64_t id, const std::string& file) {
    if (id < 0 || id >= static_cast<int64_t>(seen_.size()))
      fail("{}: {} {} out of range [0, {})", file, what_, id, seen_.size());
    if (seen_[id]) fail("{}: {} {} appears twice (the ID map is not a bijection)", file, what_, id);
    seen_[id] = 1;
  }
  void check_complete(const std::string& where) const {
    auto it = std::find(seen_.begin(), seen_.end(), 0);
    if (it != seen_.end()) fail("{}: {} {} is owned by no partition", where, what_, it - seen_.begin());
  }

 private:
  std::vector<uint8_t> seen_;
  std::string what_;
};

Array load_1d(const std::string& path, DType dtype, int64_t expected, const char* what) {
  Array a = read_npy_checked(path, dtype, 1, what);
  if (expected >= 0 && a.numel() != expected)
    fail("{}: {} has {} entries, expected {}", path, what, a.numel(), expected);
  return a;
}

}  // namespace

double InspectReport::edge_cut_ratio() const {
  int64_t cut = 0;
  for (const auto& p : parts) cut += p.cut_edges;
  return num_edges ? static_cast<double>(cut) / num_edges : 0.0;
}

double InspectReport::imbalance(int64_t PartSummary::*field) const {
  double total = 0, peak = 0;
  for (const auto& p : parts) {
    total += p.*field;
    peak = std::max(peak, static_cast<double>(p.*field));
  }
  return total > 0 ? peak / (total / parts.size()) : 1.0;
}

std::string InspectReport::table() const {
  std::string s = fmt::format("graph {} ({}), {} partitions, {} nodes, {} edges\n", graph_name, part_method, num_parts,
                              num_nodes, num_edges);
  s += fmt::format("{:>6} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "part", "owned_nodes", "in_edges", "train_nodes",
                   "halo_nodes", "cut_edges");
  for (size_t p = 0; p < parts.size(); ++p)
    s += fmt::format("{:>6} {:>12} {:>12} {:>12} {:>12} {:>12}\n", p, parts[p].owned_nodes, parts[p].in_edges,
                     parts[p].train_nodes, parts[p].halo_nodes, parts[p].cut_edges);
  s += fmt::format("edge cut {:.2f}%; balance (max/mean): nodes {:.3f}, edges {:.3f}, train {:.3f}\n",
                   100 * edge_cut_ratio(), imbalance(&PartSummary::owned_nodes), imbalance(&PartSummary::in_edges),
                   imbalance(&PartSummary::train_nodes));
  return s;
}

std::string InspectReport::json() const {
  nlohmann::json j{{"graph_name", graph_name}, {"part_method", part_method}, {"num_parts", num_parts},
                   {"num_nodes", num_nodes}, {"num_edges", num_edges}, {"edge_cut_ratio", edge_cut_ratio()},
                   {"balance", {{"nodes", imbalance(&PartSummary::owned_nodes)},
                                {"edges", imbalance(&PartSummary::in_edges)},
                                {"train_nodes", imbalance(&PartSummary::train_nodes)}}}};
  j["parts"] = nlohmann::json::array();
  for (const auto& p : parts)
    j["parts"].push_back({{"owned_nodes", p.owned_nodes}, {"in_edges", p.in_edges}, {"train_nodes", p.train_nodes},
                          {"halo_nodes", p.halo_nodes}, {"cut_edges", p.cut_edges}});
  return j.dump();
}

InspectReport inspect_partitions(const std::string& config_path) {
  const PartitionConfig c = PartitionConfig::load(config_path);
  InspectReport report;
  report.graph_name = c.graph_name;
  report.part_method = c.part_method;
  report.num_parts = c.num_parts;
  report.num_nodes = c.num_nodes;
  report.num_edges = c.num_edges;
  const int num_etypes = static_cast<int>(c.etypes.size());

  std::vector<Coverage> node_cover, edge_cover;
  std::vector<int64_t> type_nodes(c.ntypes.size(), 0), type_edges(c.etypes.size(), 0);
  for (size_t t = 0; t < c.ntypes.size(); ++t)
    for (const auto& r : c.node_map[t]) type_nodes[t] += r.second - r.first;
  for (size_t k = 0; k < c.etypes.size(); ++k)
    for (const auto& r : c.edge_map[k]) type_edges[k] += r.second - r.first;
  for (size_t t = 0; t < c.ntypes.size(); ++t) node_cover.emplace_back(type_nodes[t], "original " + c.ntypes[t] + " ID");
  for (size_t k = 0; k < c.etypes.size(); ++k) edge_cover.emplace_back(type_edges[k], "original " + c.etypes[k] + " edge ID");

  for (int p = 0; p < c.num_parts; ++p) {
    const IdRange nodes = c.part_nodes(p);
    const IdRange edges = c.part_edges(p);
    const int64_t n = nodes.second - nodes.first;
    const int64_t m = edges.second - edges.first;
    const std::string gdir = c.path(c.parts[p].part_graph);
    const Array indptr_a = load_1d(gdir + "/indptr.npy", DType::kInt64, n + 1, "indptr");
    const Array indices_a = load_1d(gdir + "/indices.npy", DType::kInt64, m, "indices");
    const Array eids_a = load_1d(gdir + "/eids.npy", DType::kInt64, m, "eids");
    Array etypes_a;
    if (num_etypes > 1) etypes_a = load_1d(gdir + "/etypes.npy", DType::kInt32, m, "etypes");
    const int64_t* indptr = indptr_a.data<int64_t>();
    const int64_t* indices = indices_a.data<int64_t>();
    const int64_t* eids = eids_a.data<int64_t>();
    const int32_t* etypes = num_etypes > 1 ? etypes_a.data<int32_t>() : nullptr;

    if (indptr[0] != 0 || indptr[n] != m) fail("{}/indptr.npy: must start at 0 and end at {} (the partition's edges)", gdir, m);
    PartSummary s;
    s.owned_nodes = n;
    s.in_edges = m;
    std::vector<int64_t> halo;
    std::vector<uint8_t> eid_seen(m, 0);
    for (int64_t local = 0; local < n; ++local) {
      if (indptr[local + 1] < indptr[local]) fail("{}/indptr.npy: decreases at node {}", gdir, local);
      const int64_t v = nodes.first + local;
      const int vtype = c.node_type_of(v);
      for (int64_t j = indptr[local]; j < indptr[local + 1]; ++j) {
        const int k = etypes ? etypes[j] : 0;
        if (k < 0 || k >= num_etypes) fail("{}/etypes.npy: entry {} is {}, expected [0, {})", gdir, j, k, num_etypes);
        const IdRange er = c.edge_map[k][p];
        if (eids[j] < er.first || eids[j] >= er.second)
          fail("{}/eids.npy: edge {} of type {} outside the partition's range [{}, {})", gdir, eids[j], c.etypes[k],
               er.first, er.second);
        if (eid_seen[eids[j] - edges.first]++) fail("{}/eids.npy: edge {} stored twice", gdir, eids[j]);
        const int64_t u = indices[j];
        if (u < 0 || u >= c.num_nodes) fail("{}/indices.npy: entry {} is {}, expected [0, {})", gdir, j, u, c.num_nodes);
        if (c.node_type_of(u) != c.etype_src(k) || vtype != c.etype_dst(k))
          fail("{}: edge {} ({} -> {}) does not connect the node types of '{}'", gdir, eids[j], u, v, c.etypes[k]);
        if (u < nodes.first || u >= nodes.second) {
          ++s.cut_edges;
          halo.push_back(u);
        }
      }
    }
    std::sort(halo.begin(), halo.end());
    s.halo_nodes = std::unique(halo.begin(), halo.end()) - halo.begin();

    const std::string nid_path = c.path(c.parts[p].orig_nids);
    const Array orig_nids = load_1d(nid_path, DType::kInt64, n, "orig_nids");
    for (int64_t local = 0; local < n; ++local)
      node_cover[c.node_type_of(nodes.first + local)].mark(orig_nids.data<int64_t>()[local], nid_path);
    const std::string eid_path = c.path(c.parts[p].orig_eids);
    const Array orig_eids = load_1d(eid_path, DType::kInt64, m, "orig_eids");
    for (int k = 0; k < num_etypes; ++k)
      for (int64_t e = c.edge_map[k][p].first; e < c.edge_map[k][p].second; ++e)
        edge_cover[k].mark(orig_eids.data<int64_t>()[e - edges.first], eid_path);

    for (const auto& [ntype, fields] : c.node_feat_schema) {
      const int t = static_cast<int>(std::find(c.ntypes.begin(), c.ntypes.end(), ntype) - c.ntypes.begin());
      if (t >= static_cast<int>(c.ntypes.size())) fail("{}: node_feat_schema names unknown type '{}'", config_path, ntype);
      const int64_t rows = c.node_map[t][p].second - c.node_map[t][p].first;
      for (const auto& [name, schema] : fields) {
        const std::string path = c.path(c.parts[p].node_feats) + "/" + ntype + "/" + name + ".npy";
        const Array a = read_npy_checked(path, schema.dtype, schema.row_shape.size() + 1, name);
        std::vector<int64_t> expect{rows};
        expect.insert(expect.end(), schema.row_shape.begin(), schema.row_shape.end());
        if (a.shape() != expect) fail("{}: shape {} does not match {} owned {} nodes", path, a.shape_string(), rows, ntype);
        if (name == "train_mask") {
          const auto* mask = static_cast<const uint8_t*>(a.raw());
          for (int64_t i = 0; i < rows; ++i) s.train_nodes += mask[i] != 0;
        }
      }
    }
    for (const auto& [etype, fields] : c.edge_feat_schema) {
      const int k = static_cast<int>(std::find(c.etypes.begin(), c.etypes.end(), etype) - c.etypes.begin());
      if (k >= num_etypes) fail("{}: edge_feat_schema names unknown type '{}'", config_path, etype);
      const int64_t rows = c.edge_map[k][p].second - c.edge_map[k][p].first;
      for (const auto& [name, schema] : fields) {
        const std::string path = c.path(c.parts[p].edge_feats) + "/" + etype + "/" + name + ".npy";
        const Array a = read_npy_checked(path, schema.dtype, schema.row_shape.size() + 1, name);
        if (a.rows() != rows) fail("{}: {} rows, expected {} (owned {} edges)", path, a.rows(), rows, etype);
      }
    }
    report.parts.push_back(s);
  }
  for (size_t t = 0; t < c.ntypes.size(); ++t) node_cover[t].check_complete(config_path);
  for (size_t k = 0; k < c.etypes.size(); ++k) edge_cover[k].check_complete(config_path);
  return report;
}

}  // namespace tessera

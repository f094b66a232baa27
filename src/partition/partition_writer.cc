// partition_dataset(): assign, reshuffle, write. Layout of <out>:
//   <graph>.json                      the config (partition_config.h)
//   part<p>/graph/{indptr,indices,eids[,etypes]}.npy   in-edge CSC of owned nodes
//   part<p>/orig_nids.npy, orig_eids.npy              new -> type-local original IDs
//   part<p>/node_feat/<ntype>/<name>.npy              rows of owned nodes, new-ID order
//   part<p>/edge_feat/<etype>/<name>.npy              rows of owned edges, new-ID order
//   extra/<name>.npy, names/<ntype>.txt, relation_names.txt (dataset-level, original IDs)
//   held_out/<split>_edges.npy         link prediction's held-out pairs, new IDs
#include <algorithm>
#include <filesystem>

#include "reshuffle.h"
#include "partition/part_files.h"
#include "base/progress.h"
#include "tessera/io/npy.h"
#include "io/staged_dir.h"
#include "tessera/partition/partition.h"
#include "tessera/base/error.h"
#include "tessera/base/timer.h"

namespace tessera {
namespace {

std::string join(const std::string& a, const std::string& b) { return (std::filesystem::path(a) / b).string(); }

template <typename T>
void write_slice(const std::string& path, const std::vector<T>& v, int64_t begin, int64_t end) {
  write_values(path, v.data() + begin, end - begin);
}

// Streams source rows `ids[0..count)` into a new .npy without materialising
// the whole gathered array.
void write_gathered(const std::string& path, const Array& source, const int64_t* ids, int64_t count) {
  std::vector<int64_t> shape = source.shape();
  shape[0] = count;
  NpyWriter w(path, source.dtype(), shape);
  constexpr int64_t kChunk = 16384;
  for (int64_t begin = 0; begin < count; begin += kChunk) {
    const int64_t n = std::min(kChunk, count - begin);
    Array rows = source.gather_rows(ids + begin, n);
    w.append(rows.raw(), rows.nbytes());
  }
  w.finish();
}

void write_mask(const std::string& path, const Array& split_ids, const int64_t* owned_orig, int64_t count, int64_t type_count) {
  std::vector<uint8_t> in_split(type_count, 0);
  const int64_t* ids = split_ids.data<int64_t>();
  for (int64_t i = 0; i < split_ids.numel(); ++i) in_split[ids[i]] = 1;
  Array mask = Array::zeros(DType::kBool, {count});
  auto* m = static_cast<uint8_t*>(mask.mutable_raw());
  for (int64_t i = 0; i < count; ++i) m[i] = in_split[owned_orig[i]];
  write_npy(path, mask);
}

}  // namespace

void check_partition_options(const PartitionOptions& options) {
  if (options.num_parts < 1) fail("--num-parts must be at least 1, got {}", options.num_parts);
  if (options.method != "metis" && options.method != "random" && options.method != "parmetis")
    fail("unknown --method '{}' (expected metis, random or parmetis)", options.method);
}

PartitionReport partition_dataset(const Dataset& d, const PartitionOptions& options) {
  check_partition_options(options);
  if (options.method == "parmetis")
    fail("--method parmetis partitions across MPI ranks from chunked input: run `tessera partition`, not "
         "partition_dataset()");
  if (options.num_parts > d.num_nodes())
    fail("--num-parts {} is larger than the number of nodes ({}): every partition needs a node", options.num_parts, d.num_nodes());
  if (options.graph_name.empty() || options.graph_name.find('/') != std::string::npos)
    fail("--graph-name '{}' must be a non-empty name without '/'", options.graph_name);

  PartitionReport report;
  Timer timer;
  std::vector<int32_t> part;
  {
    Progress phase("partition: " + options.method, 0);
    part = options.method == "metis" ? metis_assignment(d, options) : random_assignment(d, options);
  }
  report.assign_s = timer.seconds();

  timer.reset();
  Reshuffled r = [&] {
    Progress phase("partition: reshuffle", 0);
    return reshuffle(d, part, options.num_parts);
  }();
  report.reshuffle_s = timer.seconds();
  report.cut_edges = r.cut_edges;
  report.num_edges = d.num_edges();

  timer.reset();
  StagedDirectory out(options.out_dir);
  PartitionConfig config;
  config.graph_name = options.graph_name;
  config.part_method = options.method;
  config.num_parts = options.num_parts;
  config.num_nodes = d.num_nodes();
  config.num_edges = d.num_edges();
  for (const auto& t : d.node_types) config.ntypes.push_back(t.name);
  for (const auto& e : d.edge_types) config.etypes.push_back(e.canonical());
  config.node_map = r.node_map;
  config.edge_map = r.edge_map;
  for (const auto& t : d.node_types) {
    auto& schema = config.node_feat_schema[t.name];
    for (const auto& [key, a] : t.data) schema[key] = schema_of(a.dtype(), a.shape());
    for (auto [key, ids] : {std::pair{"train_mask", &t.train}, {"val_mask", &t.val}, {"test_mask", &t.test}})
      if (!ids->empty_handle()) schema[key] = ArraySchema{DType::kBool, {}};
  }
  for (const auto& e : d.edge_types)
    for (const auto& [key, a] : e.data)
      config.edge_feat_schema[e.canonical()][key] = schema_of(a.dtype(), a.shape());

  Progress bar("partition: write", options.num_parts);
  for (int p = 0; p < options.num_parts; ++p, bar.add(1)) {
    config.parts.push_back(part_files(p));
    const IdRange nodes{r.node_map.front()[p].first, r.node_map.back()[p].second};
    const IdRange edges{r.edge_map.front()[p].first, r.edge_map.back()[p].second};

    const std::string gdir = out.subdir(config.parts[p].part_graph);
    const int64_t e0 = r.indptr[nodes.first], e1 = r.indptr[nodes.second];
    {
      NpyWriter w(join(gdir, "indptr.npy"), DType::kInt64, {nodes.second - nodes.first + 1});
      std::vector<int64_t> local(r.indptr.begin() + nodes.first, r.indptr.begin() + nodes.second + 1);
      for (auto& x : local) x -= e0;
      w.append(local.data(), local.size() * sizeof(int64_t));
      w.finish();
    }
    write_slice(join(gdir, "indices.npy"), r.indices, e0, e1);
    write_slice(join(gdir, "eids.npy"), r.eids, e0, e1);
    if (!r.etypes.empty()) write_slice(join(gdir, "etypes.npy"), r.etypes, e0, e1);
    write_slice(join(out.path(), config.parts[p].orig_nids), r.orig_nid, nodes.first, nodes.second);
    write_slice(join(out.path(), config.parts[p].orig_eids), r.orig_eid, edges.first, edges.second);

    for (size_t t = 0; t < d.node_types.size(); ++t) {
      const NodeType& nt = d.node_types[t];
      const IdRange range = r.node_map[t][p];
      const int64_t* owned = r.orig_nid.data() + range.first;
      const int64_t count = range.second - range.first;
      if (nt.data.empty() && nt.train.empty_handle() && nt.val.empty_handle() && nt.test.empty_handle()) continue;
      const std::string fdir = out.subdir(node_data_folder(config.parts[p], nt.name));
      for (const auto& [key, a] : nt.data) write_gathered(join(fdir, key + ".npy"), a, owned, count);
      for (auto [key, ids] : {std::pair{"train_mask", &nt.train}, {"val_mask", &nt.val}, {"test_mask", &nt.test}})
        if (!ids->empty_handle()) write_mask(join(fdir, std::string(key) + ".npy"), *ids, owned, count, nt.count);
    }
    for (size_t k = 0; k < d.edge_types.size(); ++k) {
      const EdgeType& et = d.edge_types[k];
      if (et.data.empty()) continue;
      const IdRange range = r.edge_map[k][p];
      const std::string fdir = out.subdir(edge_data_folder(config.parts[p], et.canonical()));
      for (const auto& [key, a] : et.data)
        write_gathered(join(fdir, key + ".npy"), a, r.orig_eid.data() + range.first, range.second - range.first);
    }
  }

  if (!d.held_out_edges.empty()) {
    // One node type: original homogeneous IDs are type-local ones.
    std::vector<int64_t> new_of_orig(r.orig_nid.size());
    for (size_t i = 0; i < r.orig_nid.size(); ++i) new_of_orig[r.orig_nid[i]] = static_cast<int64_t>(i);
    for (const auto& [split, pairs] : d.held_out_edges) {
      std::vector<int64_t> renamed(pairs.data<int64_t>(), pairs.data<int64_t>() + pairs.numel());
      for (int64_t& v : renamed) v = new_of_orig.at(v);
      const std::string file = "held_out/" + split + "_edges.npy";
      NpyWriter w(join(out.subdir("held_out"), split + "_edges.npy"), DType::kInt64, {pairs.rows(), 2});
      w.append(renamed.data(), renamed.size() * sizeof(int64_t));
      w.finish();
      config.held_out_edges[split] = file;
    }
  }
  for (const auto& [key, a] : d.extra) {
    write_npy(join(out.subdir("extra"), key + ".npy"), a);
    config.extra[key] = "extra/" + key + ".npy";
  }
  for (const auto& t : d.node_types)
    if (!t.names.empty()) {
      write_lines(join(out.subdir("names"), t.name + ".txt"), t.names);
      config.node_names[t.name] = "names/" + t.name + ".txt";
    }
  if (!d.relation_names.empty()) {
    write_lines(join(out.path(), "relation_names.txt"), d.relation_names);
    config.relation_names = "relation_names.txt";
  }
  write_text_file(join(out.path(), options.graph_name + ".json"), config.to_json());
  out.commit();
  report.write_s = timer.seconds();
  return report;
}

}  // namespace tessera

#include "reshuffle.h"

namespace tessera {

Reshuffled reshuffle(const Dataset& d, const std::vector<int32_t>& part, int num_parts) {
  const int num_ntypes = static_cast<int>(d.node_types.size());
  const int num_etypes = static_cast<int>(d.edge_types.size());
  const std::vector<int64_t> offsets = d.node_offsets();
  const int64_t n = d.num_nodes();
  Reshuffled r;

  // Nodes: partition-major, type-minor, original order within a (part, type).
  std::vector<std::vector<int64_t>> count(num_parts, std::vector<int64_t>(num_ntypes, 0));
  for (int t = 0; t < num_ntypes; ++t)
    for (int64_t v = offsets[t]; v < offsets[t + 1]; ++v) ++count[part[v]][t];
  r.node_map.assign(num_ntypes, std::vector<IdRange>(num_parts));
  std::vector<std::vector<int64_t>> cursor(num_parts, std::vector<int64_t>(num_ntypes));
  int64_t next = 0;
  for (int p = 0; p < num_parts; ++p)
    for (int t = 0; t < num_ntypes; ++t) {
      r.node_map[t][p] = {next, next + count[p][t]};
      cursor[p][t] = next;
      next += count[p][t];
    }
  std::vector<int64_t> new_id(n);
  r.orig_nid.resize(n);
  for (int t = 0; t < num_ntypes; ++t)
    for (int64_t v = offsets[t]; v < offsets[t + 1]; ++v) {
      const int64_t id = cursor[part[v]][t]++;
      new_id[v] = id;
      r.orig_nid[id] = v - offsets[t];
    }

  // Edges belong to the partition of their destination; same layout as nodes.
  std::vector<std::vector<int64_t>> ecount(num_parts, std::vector<int64_t>(num_etypes, 0));
  r.indptr.assign(n + 1, 0);
  for_each_edge(d, [&](int k, int64_t, int64_t, int64_t v) {
    ++ecount[part[v]][k];
    ++r.indptr[new_id[v] + 1];
  });
  for (int64_t v = 0; v < n; ++v) r.indptr[v + 1] += r.indptr[v];
  r.edge_map.assign(num_etypes, std::vector<IdRange>(num_parts));
  std::vector<std::vector<int64_t>> ecursor(num_parts, std::vector<int64_t>(num_etypes));
  next = 0;
  for (int p = 0; p < num_parts; ++p)
    for (int k = 0; k < num_etypes; ++k) {
      r.edge_map[k][p] = {next, next + ecount[p][k]};
      ecursor[p][k] = next;
      next += ecount[p][k];
    }

  const int64_t m = d.num_edges();
  r.indices.resize(m);
  r.eids.resize(m);
  r.orig_eid.resize(m);
  if (num_etypes > 1) r.etypes.resize(m);
  std::vector<int64_t> fill(r.indptr.begin(), r.indptr.end() - 1);
  for_each_edge(d, [&](int k, int64_t i, int64_t u, int64_t v) {
    const int p = part[v];
    const int64_t pos = fill[new_id[v]]++;
    // With one edge type, edge IDs follow the CSC order (partition-major, as
    // the ID map requires), so a sampler gets an edge's ID from its position
    // without reading eids.npy: one cache miss per sampled edge, not two.
    const int64_t eid = num_etypes == 1 ? pos : ecursor[p][k]++;
    r.indices[pos] = new_id[u];
    r.eids[pos] = eid;
    r.orig_eid[eid] = i;
    if (num_etypes > 1) r.etypes[pos] = k;
    r.cut_edges += part[u] != p;
  });
  return r;
}

}  // namespace tessera

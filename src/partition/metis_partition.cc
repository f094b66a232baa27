// METIS k-way partitioning with one balance constraint per node type, plus
// training nodes (--balance-train) and in-degree (--balance-edges), as DistDGL
// does. METIS wants an undirected simple graph, so edges of every type are
// symmetrised, self-loops dropped and duplicates merged first.
#include <metis.h>

#include <algorithm>
#include <limits>

#include "tessera/partition/partition.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"

namespace tessera {
namespace {

constexpr int kMaxTypeConstraints = 4;

struct UndirectedGraph {
  std::vector<idx_t> xadj;
  std::vector<idx_t> adjncy;
};

UndirectedGraph build_undirected(const Dataset& d) {
  const int64_t n = d.num_nodes();
  const int64_t entries = 2 * d.num_edges();
  if (n >= std::numeric_limits<idx_t>::max() || entries >= std::numeric_limits<idx_t>::max())
    fail("graph has {} nodes and {} adjacency entries; Debian's METIS is built with 32-bit idx_t and takes fewer "
         "than 2^31 of each in one call: use --method random, or a METIS built with IDXTYPEWIDTH=64",
         n, entries);

  // Count, then fill both directions of every non-loop edge.
  std::vector<int64_t> degree(n + 1, 0);
  for_each_edge(d, [&](int, int64_t, int64_t u, int64_t v) {
    if (u == v) return;
    ++degree[u + 1];
    ++degree[v + 1];
  });
  for (int64_t i = 0; i < n; ++i) degree[i + 1] += degree[i];
  std::vector<idx_t> adj(degree[n]);
  std::vector<int64_t> cursor(degree.begin(), degree.end() - 1);
  for_each_edge(d, [&](int, int64_t, int64_t u, int64_t v) {
    if (u == v) return;
    adj[cursor[u]++] = static_cast<idx_t>(v);
    adj[cursor[v]++] = static_cast<idx_t>(u);
  });
  cursor.clear();
  cursor.shrink_to_fit();

  // Sort and deduplicate each list in place, then compact.
  std::vector<int64_t> unique_len(n);
#pragma omp parallel for schedule(dynamic, 4096)
  for (int64_t u = 0; u < n; ++u) {
    idx_t* b = adj.data() + degree[u];
    idx_t* e = adj.data() + degree[u + 1];
    std::sort(b, e);
    unique_len[u] = std::unique(b, e) - b;
  }
  UndirectedGraph g;
  g.xadj.resize(n + 1);
  g.xadj[0] = 0;
  int64_t write = 0;
  for (int64_t u = 0; u < n; ++u) {
    std::copy_n(adj.begin() + degree[u], unique_len[u], adj.begin() + write);
    write += unique_len[u];
    g.xadj[u + 1] = static_cast<idx_t>(write);
  }
  adj.resize(write);
  adj.shrink_to_fit();
  g.adjncy = std::move(adj);
  return g;
}

}  // namespace

std::vector<int32_t> metis_assignment(const Dataset& d, const PartitionOptions& options) {
  const int64_t n = d.num_nodes();
  if (options.num_parts == 1) return std::vector<int32_t>(n, 0);
  UndirectedGraph g = build_undirected(d);

  // Vertex weights, one column per constraint. METIS balances at most a few
  // constraints well (and accepts at most 16), so the largest node types get
  // a column each and all small types share one. A column of very little
  // total weight cannot be balanced (one node of a type across 2 parts) and
  // makes METIS leave a part empty: such small types count with the largest.
  const std::vector<int64_t> offsets = d.node_offsets();
  const int num_types = static_cast<int>(d.node_types.size());
  std::vector<int> order(num_types);
  for (int t = 0; t < num_types; ++t) order[t] = t;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return d.node_types[a].count > d.node_types[b].count; });
  std::vector<int> type_column(num_types);
  int type_columns = 0;
  for (int t : order) {
    const bool own = type_columns < kMaxTypeConstraints && d.node_types[t].count >= n / 20;
    type_column[t] = own ? type_columns++ : -1;
  }
  int64_t small_nodes = 0;
  for (int t = 0; t < num_types; ++t)
    if (type_column[t] < 0) small_nodes += d.node_types[t].count;
  const bool small_column =
      small_nodes > 0 && (type_columns == 0 || small_nodes >= 4 * options.num_parts);
  for (int t = 0; t < num_types; ++t)
    if (type_column[t] < 0) type_column[t] = small_column ? type_columns : type_column[order[0]];
  if (small_column) ++type_columns;

  // The same for training nodes: a handful cannot be balanced (and need not be).
  const bool balance_train = options.balance_train && d.num_train() >= 4 * options.num_parts;
  const int ncon = type_columns + (balance_train ? 1 : 0) + (options.balance_edges ? 1 : 0);
  std::vector<idx_t> vwgt(static_cast<size_t>(n) * ncon, 0);
  for (int t = 0; t < num_types; ++t)
    for (int64_t v = offsets[t]; v < offsets[t + 1]; ++v) vwgt[v * ncon + type_column[t]] = 1;
  int col = type_columns;
  if (balance_train) {
    for (int t = 0; t < num_types; ++t) {
      const Array& train = d.node_types[t].train;
      if (train.empty_handle()) continue;
      const int64_t* ids = train.data<int64_t>();
      for (int64_t i = 0; i < train.numel(); ++i) vwgt[(offsets[t] + ids[i]) * ncon + col] = 1;
    }
    ++col;
  }
  if (options.balance_edges) {
    // Each node's stored in-edges: a partition holds the in-edges of its nodes.
    for_each_edge(d, [&](int, int64_t, int64_t, int64_t v) { ++vwgt[v * ncon + col]; });
  }

  idx_t nvtxs = static_cast<idx_t>(n);
  idx_t ncon_idx = ncon;
  idx_t nparts = options.num_parts;
  idx_t objval = 0;
  std::vector<idx_t> part(n);
  idx_t metis_options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(metis_options);
  metis_options[METIS_OPTION_SEED] = static_cast<idx_t>(splitmix64(options.seed) & 0x7fffffff);
  metis_options[METIS_OPTION_NUMBERING] = 0;
  // Refinement passes per level (default 10): 4 gave the same cut on RMAT
  // 1M/20M (19.62% vs 19.66%) in 5 s less METIS time.
  metis_options[METIS_OPTION_NITER] = 4;
  // A graph with no edges at all would make METIS divide by zero.
  if (g.adjncy.empty()) return random_assignment(d, options);
  const int status = METIS_PartGraphKway(&nvtxs, &ncon_idx, g.xadj.data(), g.adjncy.data(), vwgt.data(), nullptr,
                                         nullptr, &nparts, nullptr, nullptr, metis_options, &objval, part.data());
  if (status != METIS_OK)
    fail("METIS failed ({}) partitioning {} nodes into {} parts with {} constraints",
         status == METIS_ERROR_MEMORY ? "out of memory" : status == METIS_ERROR_INPUT ? "input error" : "error", n,
         options.num_parts, ncon);
  // METIS reports some failures only on stderr; never pass on an empty part.
  std::vector<int64_t> sizes(options.num_parts, 0);
  for (idx_t p : part) {
    if (p < 0 || p >= nparts) fail("METIS returned partition id {} outside [0, {})", p, options.num_parts);
    ++sizes[p];
  }
  for (int p = 0; p < options.num_parts; ++p)
    if (sizes[p] == 0)
      fail("METIS left partition {} of {} empty ({} nodes, {} constraints); use fewer parts or --method random", p,
           options.num_parts, n, ncon);
  return std::vector<int32_t>(part.begin(), part.end());
}

std::vector<int32_t> random_assignment(const Dataset& d, const PartitionOptions& options) {
  // Deal a shuffled node order round-robin: exactly balanced node counts.
  const int64_t n = d.num_nodes();
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  Rng rng(options.seed, 0x7a11);
  for (int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
  std::vector<int32_t> part(n);
  for (int64_t i = 0; i < n; ++i) part[order[i]] = static_cast<int32_t>(i % options.num_parts);
  return part;
}

}  // namespace tessera

#include "tessera/sampling/neighbor_sampler.h"

#include <algorithm>
#include <limits>
#include <cmath>
#include <numeric>
#include <utility>

#include "tessera/base/error.h"
#include "base/prefetch.h"
#include "tessera/base/random.h"

namespace tessera::sampling {
namespace {

// Fanouts up to this size pick without replacement by Floyd's algorithm with
// a linear membership scan (k draws, no scratch); larger ones shuffle a
// scratch index list partially (k swaps).
constexpr int64_t kFloydMaxFanout = 64;

// How far ahead the walk over seeds prefetches their CSC rows: one random
// cache miss per seed for indptr and one for indices dominate the cost. A
// seed whose edges are all taken costs little, so the lead must span many
// of them (16 / 8 left the indptr read stalling: 37% of the function's
// samples in a job's profile; 32 / 16 sample 1.08x as fast in
// bench_sampling, 64 / 32 no faster). The rows of such seeds are
// prefetched whole, up to kTakeAllPrefetchMax entries, since every entry
// is read.
constexpr int64_t kIndptrAhead = 32;
constexpr int64_t kIndicesAhead = 16;
constexpr int64_t kTakeAllPrefetchMax = 32;
constexpr int64_t kEntriesPerLine = 64 / sizeof(int64_t);
// How far the reads of picked edges trail their prefetches.
constexpr size_t kGatherLag = 64;

// Appends n elements to v and returns where they start, for the caller to
// write in place: a push_back per element was an out-of-line call in these
// loops, the hottest of sampling.
template <typename T>
T* grow(std::vector<T>* v, size_t n) {
  const size_t at = v->size();
  v->resize(at + n);
  return v->data() + at;
}

struct Scratch {
  std::vector<int64_t> picks;                 // chosen offsets within a seed's edge list
  std::vector<std::pair<double, int64_t>> keyed;  // weighted: (key, offset)
  std::vector<double> cumulative;             // weighted with replacement
  std::vector<int64_t> positions;             // CSC positions of the picked edges
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

void pick_uniform(Rng& rng, int64_t degree, int64_t fanout, bool replace, std::vector<int64_t>* picks) {
  picks->clear();
  if (replace) {
    for (int64_t j = 0; j < fanout; ++j) picks->push_back(static_cast<int64_t>(rng.below(degree)));
    return;
  }
  if (fanout <= kFloydMaxFanout) {
    // Floyd: for j = n-k .. n-1 draw t in [0, j]; take t unless taken, else j.
    for (int64_t j = degree - fanout; j < degree; ++j) {
      const int64_t t = static_cast<int64_t>(rng.below(static_cast<uint64_t>(j) + 1));
      const bool taken = std::find(picks->begin(), picks->end(), t) != picks->end();
      picks->push_back(taken ? j : t);
    }
    return;
  }
  picks->resize(degree);
  std::iota(picks->begin(), picks->end(), 0);
  for (int64_t j = 0; j < fanout; ++j) {
    const int64_t t = j + static_cast<int64_t>(rng.below(static_cast<uint64_t>(degree - j)));
    std::swap((*picks)[j], (*picks)[t]);
  }
  picks->resize(fanout);
}

// The edge IDs of one seed's in-edges: read from eids.npy, or computed from
// the position when the partition numbers its edges in CSC order.
struct EdgeIds {
  const int64_t* ids;  // null: ID = first + offset
  int64_t first;
  int64_t operator[](int64_t offset) const { return ids ? ids[offset] : first + offset; }
};

float weight_of(const FanoutSpec& spec, int64_t eid, int etype) {
  const FanoutSpec::EdgeWeights& w = spec.weights[static_cast<size_t>(etype)];
  return w.values != nullptr ? w.values[eid - w.offset] : 1.0F;
}

// Picks up to `fanout` of `degree` edges (IDs `eids`, edge types `etypes` or
// all type 0 when null) in proportion to their weights in `spec`.
void pick_weighted(Rng& rng, const EdgeIds& eids, const int32_t* etypes, int64_t degree, int64_t fanout,
                   const FanoutSpec& spec, Scratch* s) {
  s->picks.clear();
  if (spec.replace) {
    s->cumulative.resize(degree);
    double total = 0;
    for (int64_t j = 0; j < degree; ++j) s->cumulative[j] = total += weight_of(spec, eids[j], etypes ? etypes[j] : 0);
    if (total <= 0) return;
    for (int64_t j = 0; j < fanout; ++j) {
      const double r = rng.uniform() * total;
      const auto it = std::upper_bound(s->cumulative.begin(), s->cumulative.end(), r);
      s->picks.push_back(std::min<int64_t>(it - s->cumulative.begin(), degree - 1));
    }
    return;
  }
  // Efraimidis-Spirakis: each edge gets key log(u) / w; the k largest keys
  // are a weighted sample without replacement. Zero weights never enter.
  s->keyed.clear();
  for (int64_t j = 0; j < degree; ++j) {
    const float w = weight_of(spec, eids[j], etypes ? etypes[j] : 0);
    if (w > 0) s->keyed.emplace_back(std::log(1.0 - rng.uniform()) / w, j);
  }
  const int64_t k = std::min<int64_t>(fanout, static_cast<int64_t>(s->keyed.size()));
  std::nth_element(s->keyed.begin(), s->keyed.begin() + k, s->keyed.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (int64_t j = 0; j < k; ++j) s->picks.push_back(s->keyed[j].second);
}

void check_seed(const CscView& graph, int64_t seed) {
  const int64_t local = seed - graph.first_node;
  if (local < 0 || local >= graph.num_nodes)
    fail("sampling: seed {} is not a node of partition {} (it owns {}..{})", seed, graph.part, graph.first_node,
         graph.first_node + graph.num_nodes - 1);
}

// DGL's sample_etype_neighbors: each seed's in-edges of type k (a contiguous
// run of its sorted list, found by binary search) give up to
// etype_fanouts[k] edges, drawn from a stream of their own.
void sample_per_etype(const CscView& graph, const int64_t* seeds, int64_t count, const FanoutSpec& spec,
                      SampledEdges* out) {
  const int64_t num_etypes = static_cast<int64_t>(spec.etype_fanouts.size());
  Scratch& s = scratch();
  for (int64_t i = 0; i < count; ++i) {
    check_seed(graph, seeds[i]);
    const int64_t local = seeds[i] - graph.first_node;
    const int64_t begin = graph.indptr[local], end = graph.indptr[local + 1];
    int64_t taken = 0;
    for (int64_t run = begin; run < end;) {
      const int32_t k = graph.etypes ? graph.etypes[run] : 0;
      const int64_t run_end = graph.etypes ? std::upper_bound(graph.etypes + run, graph.etypes + end, k) - graph.etypes : end;
      if (k < 0 || k >= num_etypes)
        fail("sampling: partition {} has an edge of type {} but the request names {} edge types", graph.part, k,
             num_etypes);
      const int64_t fanout = spec.etype_fanouts[k], degree = run_end - run;
      s.picks.clear();
      Rng rng(splitmix64(spec.key + static_cast<uint64_t>(k) + 1), static_cast<uint64_t>(seeds[i]));
      if (!spec.weights.empty() && fanout != 0) {
        pick_weighted(rng, EdgeIds{graph.eids ? graph.eids + run : nullptr, graph.first_edge + run},
                      graph.etypes ? graph.etypes + run : nullptr, degree, fanout < 0 ? degree : fanout, spec, &s);
      } else if (fanout < 0 || (degree <= fanout && !spec.replace)) {
        for (int64_t j = 0; j < degree; ++j) s.picks.push_back(j);
      } else if (fanout > 0) {
        pick_uniform(rng, degree, fanout, spec.replace, &s.picks);
      }
      const size_t picked = s.picks.size();
      int64_t* src = grow(&out->src, picked);
      int64_t* eids = grow(&out->eids, picked);
      for (size_t q = 0; q < picked; ++q) {
        const int64_t pos = run + s.picks[q];
        src[q] = graph.indices[pos];
        eids[q] = graph.eids ? graph.eids[pos] : graph.first_edge + pos;
      }
      if (graph.etypes) out->etypes.insert(out->etypes.end(), picked, k);
      taken += static_cast<int64_t>(picked);
      run = run_end;
    }
    out->counts.push_back(taken);
  }
}

}  // namespace

CscView csc_view(const store::PartitionStore& partition) {
  CscView v;
  v.indptr = partition.indptr().data<int64_t>();
  v.indices = partition.indices().data<int64_t>();
  v.eids = partition.eids_are_positions() ? nullptr : partition.eids().data<int64_t>();
  v.first_edge = partition.first_edge();
  v.first_node = partition.first_node();
  v.num_nodes = partition.num_nodes();
  v.part = partition.part();
  if (!partition.etypes().empty_handle()) v.etypes = partition.etypes().data<int32_t>();
  return v;
}

void sample_in_edges(const CscView& graph, const int64_t* seeds, int64_t count, const FanoutSpec& spec,
                     SampledEdges* out) {
  if (!spec.etype_fanouts.empty()) {
    sample_per_etype(graph, seeds, count, spec, out);
    return;
  }
  if (spec.fanout == 0) {
    out->counts.insert(out->counts.end(), count, 0);
    return;
  }
  const bool all = spec.fanout < 0;
  Scratch& s = scratch();
  // Two passes in step: the first picks the positions of each seed's edges
  // and prefetches them, the second reads the picked sources kGatherLag
  // positions behind, so the random reads of many seeds are in flight at
  // once instead of one seed's at a time.
  std::vector<int64_t>& positions = s.positions;
  positions.clear();
  if (!all) {
    // What the layer will likely draw; without replacement no more than the
    // partition's edges, whatever the fanout asks.
    int64_t expected = 0;
    if (__builtin_mul_overflow(count, spec.fanout, &expected)) expected = std::numeric_limits<int64_t>::max();
    if (!spec.replace) expected = std::min(expected, graph.indptr[graph.num_nodes]);
    out->src.reserve(out->src.size() + expected);
    out->eids.reserve(out->eids.size() + expected);
  }
  size_t gathered = 0;
  auto gather_until = [&](size_t end) {
    if (end <= gathered) return;
    const size_t n = end - gathered;
    int64_t* src = grow(&out->src, n);
    int64_t* eids = grow(&out->eids, n);
    const int64_t* pos = positions.data() + gathered;
    for (size_t k = 0; k < n; ++k) {
      src[k] = graph.indices[pos[k]];
      eids[k] = graph.eids ? graph.eids[pos[k]] : graph.first_edge + pos[k];
    }
    if (graph.etypes) {
      int32_t* etypes = grow(&out->etypes, n);
      for (size_t k = 0; k < n; ++k) etypes[k] = graph.etypes[pos[k]];
    }
    gathered = end;
  };
  auto local_of = [&](int64_t i) { return seeds[i] - graph.first_node; };
  for (int64_t i = 0; i < count; ++i) {
    // Prefetch the CSC rows of seeds ahead: indptr first, then (once that
    // line has likely arrived) the start of the edge list.
    if (i + kIndptrAhead < count) {
      const int64_t ahead = local_of(i + kIndptrAhead);
      if (ahead >= 0 && ahead < graph.num_nodes) prefetch_row_kept(graph.indptr + ahead, 16);
    }
    if (i + kIndicesAhead < count) {
      const int64_t ahead = local_of(i + kIndicesAhead);
      if (ahead >= 0 && ahead < graph.num_nodes) {
        const int64_t b = graph.indptr[ahead], n = graph.indptr[ahead + 1] - b;
        // Picks land anywhere in a long row: its first cache line only.
        const int64_t take = all || n <= spec.fanout ? std::min<int64_t>(n, kTakeAllPrefetchMax) : kEntriesPerLine;
        prefetch_row_kept(graph.indices + b, static_cast<size_t>(take) * sizeof(int64_t));
        if (graph.eids) prefetch_row_kept(graph.eids + b, static_cast<size_t>(take) * sizeof(int64_t));
      }
    }
    check_seed(graph, seeds[i]);
    const int64_t local = local_of(i);
    const int64_t begin = graph.indptr[local];
    const int64_t degree = graph.indptr[local + 1] - begin;
    if (degree == 0) {
      out->counts.push_back(0);
      continue;
    }
    if (spec.weights.empty() && (all || (degree <= spec.fanout && !spec.replace))) {
      out->counts.push_back(degree);
      int64_t* p = grow(&positions, static_cast<size_t>(degree));
      std::iota(p, p + degree, begin);
    } else {
      Rng rng(spec.key, static_cast<uint64_t>(seeds[i]));
      if (!spec.weights.empty()) {
        pick_weighted(rng, EdgeIds{graph.eids ? graph.eids + begin : nullptr, graph.first_edge + begin},
                      graph.etypes ? graph.etypes + begin : nullptr, degree, all ? degree : spec.fanout, spec, &s);
      } else {
        pick_uniform(rng, degree, spec.fanout, spec.replace, &s.picks);
      }
      const int64_t picked = static_cast<int64_t>(s.picks.size());
      out->counts.push_back(picked);
      int64_t* p = grow(&positions, static_cast<size_t>(picked));
      for (int64_t k = 0; k < picked; ++k) {
        const int64_t j = s.picks[static_cast<size_t>(k)];
        __builtin_prefetch(graph.indices + begin + j, 0, 1);
        if (graph.eids) __builtin_prefetch(graph.eids + begin + j, 0, 1);
        p[k] = begin + j;
      }
    }
    if (positions.size() > kGatherLag) gather_until(positions.size() - kGatherLag);
  }
  gather_until(positions.size());
}

}  // namespace tessera::sampling

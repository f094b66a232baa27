// The pieces of edge mini-batches and DGL's graph API that need no servers: to_block's relabelling, the
// exclusion of a batch's edges from a sample, and the out-edge counts the out-degree service adds up.
// Checked against brute force on small graphs; the distributed paths are in tests/python/test_graph_services.py.
#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "server/graph_service.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"
#include "tessera/sampling/edge_exclusion.h"
#include "tessera/sampling/to_block.h"

namespace tessera::sampling {
namespace {

TEST(ToBlock, DestinationsFirstThenSourcesByFirstAppearanceAndEveryEdgeKept) {
  Rng rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t n = 40, m = 1 + static_cast<int64_t>(rng.below(120));
    std::vector<int64_t> dst_nodes;
    for (int64_t v = 0; v < n; v += 1 + static_cast<int64_t>(rng.below(3))) dst_nodes.push_back(v);
    std::vector<int64_t> src(m), dst(m), eids(m);
    for (int64_t e = 0; e < m; ++e) {
      src[e] = static_cast<int64_t>(rng.below(n));
      dst[e] = dst_nodes[rng.below(dst_nodes.size())];
      eids[e] = 1000 + e;
    }
    BlockBuilder builder(n);
    std::vector<int64_t> order;
    const Block b = to_block(src.data(), dst.data(), eids.data(), m, dst_nodes, builder, &order);
    ASSERT_EQ(b.num_dst, static_cast<int64_t>(dst_nodes.size()));
    EXPECT_TRUE(std::equal(dst_nodes.begin(), dst_nodes.end(), b.src_nodes.begin()));
    ASSERT_EQ(b.num_edges(), m);
    // Each block edge is input edge order[i], with its ends and ID; the input order survives per destination.
    std::multiset<std::pair<int64_t, int64_t>> expected, got;
    for (int64_t d = 0; d < b.num_dst; ++d)
      for (int64_t i = b.indptr[d]; i < b.indptr[d + 1]; ++i) {
        const int64_t e = order[i];
        EXPECT_EQ(b.src_nodes[b.indices[i]], src[e]);
        EXPECT_EQ(dst_nodes[d], dst[e]);
        EXPECT_EQ(b.eids[i], eids[e]);
        if (i > b.indptr[d]) {
          EXPECT_LT(order[i - 1], e);
        }
        got.insert({src[e], dst[e]});
      }
    for (int64_t e = 0; e < m; ++e) expected.insert({src[e], dst[e]});
    EXPECT_EQ(got, expected);
    // Non-destination sources follow in order of first appearance along the block's edges, once each.
    std::set<int64_t> seen(dst_nodes.begin(), dst_nodes.end());
    std::vector<int64_t> others;
    for (int64_t i = 0; i < m; ++i)
      if (seen.insert(src[order[i]]).second) others.push_back(src[order[i]]);
    EXPECT_TRUE(std::equal(others.begin(), others.end(), b.src_nodes.begin() + b.num_dst));
    EXPECT_EQ(b.num_src(), b.num_dst + static_cast<int64_t>(others.size()));
  }
}

TEST(ToBlock, AnEdgeOutsideTheDestinationsIsNamed) {
  const std::vector<int64_t> src{1, 2}, dst{0, 3}, eids{0, 1}, dst_nodes{0};
  BlockBuilder builder(5);
  try {
    to_block(src.data(), dst.data(), eids.data(), 2, dst_nodes, builder);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2 -> 3"), std::string::npos) << e.what();
  }
}

TEST(EdgeExclusion, RemovesExactlyTheListedEdgesAndEndsAndKeepsCountsRight) {
  Rng rng(3);
  // Seeds 10, 11, 12 with sampled in-edges (source, eid), 2 edge types.
  const std::vector<int64_t> seeds{10, 11, 12};
  SampledEdges edges;
  std::vector<std::array<int64_t, 4>> all;  // seed index, source, eid, type
  int64_t eid = 0;
  for (int i = 0; i < 3; ++i) {
    const int64_t c = 5 + static_cast<int64_t>(rng.below(5));
    edges.counts.push_back(c);
    for (int64_t k = 0; k < c; ++k) {
      const int64_t s = static_cast<int64_t>(rng.below(6)), t = static_cast<int64_t>(rng.below(2));
      edges.src.push_back(s);
      edges.eids.push_back(eid);
      edges.etypes.push_back(static_cast<int32_t>(t));
      all.push_back({i, s, eid++, t});
    }
  }
  EdgeExclusion ex;
  ex.eids = {4, 0, 4, 9};
  ex.ends = {{3, 11, 1}, {5, 12, 0}};
  ex.seal();
  remove_excluded(seeds.data(), ex, &edges);
  std::vector<std::array<int64_t, 4>> kept;
  for (const auto& e : all) {
    const bool by_id = e[2] == 0 || e[2] == 4 || e[2] == 9;
    const bool by_ends = (e[1] == 3 && seeds[e[0]] == 11 && e[3] == 1) || (e[1] == 5 && seeds[e[0]] == 12 && e[3] == 0);
    if (!by_id && !by_ends) kept.push_back(e);
  }
  ASSERT_EQ(edges.src.size(), kept.size());
  size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    int64_t c = 0;
    for (const auto& e : kept)
      if (e[0] == i) {
        EXPECT_EQ(edges.src[at], e[1]);
        EXPECT_EQ(edges.eids[at], e[2]);
        EXPECT_EQ(edges.etypes[at], e[3]);
        ++at, ++c;
      }
    EXPECT_EQ(edges.counts[i], c);
  }
}

TEST(OutDegrees, CountSourcesMatchesACountByHandForFewAndManyNodesPerType) {
  Rng rng(11);
  const int64_t n = 50, m = 400;
  std::vector<int64_t> sources(m);
  std::vector<int32_t> types(m);
  std::map<int64_t, int64_t> count, count_of_type1;
  for (int64_t e = 0; e < m; ++e) {
    sources[e] = static_cast<int64_t>(rng.below(n));
    types[e] = static_cast<int32_t>(rng.below(3));
    ++count[sources[e]];
    if (types[e] == 1) ++count_of_type1[sources[e]];
  }
  for (const std::vector<int64_t>& nodes : {std::vector<int64_t>{3, 3, 49, 0}, [&] {
         std::vector<int64_t> every(n);
         for (int64_t v = 0; v < n; ++v) every[v] = v;
         return every;
       }()}) {
    const auto k = static_cast<int64_t>(nodes.size());
    const std::vector<int64_t> all = server::count_sources(sources.data(), nullptr, m, nodes.data(), k, n, -1);
    const std::vector<int64_t> any = server::count_sources(sources.data(), types.data(), m, nodes.data(), k, n, -1);
    const std::vector<int64_t> one = server::count_sources(sources.data(), types.data(), m, nodes.data(), k, n, 1);
    for (size_t i = 0; i < nodes.size(); ++i) {
      EXPECT_EQ(all[i], count[nodes[i]]) << nodes[i];
      EXPECT_EQ(any[i], count[nodes[i]]) << nodes[i];
      EXPECT_EQ(one[i], count_of_type1[nodes[i]]) << nodes[i];
    }
  }
}

}  // namespace
}  // namespace tessera::sampling

#include "partition_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "tessera/base/error.h"
#include "tessera/partition/partition_book.h"

#include "tessera/io/npy.h"
#include "tessera/partition/partition_config.h"

namespace tessera::testing {

void check_partitioned(const Dataset& d, const std::string& config_path, std::vector<PartCounts>* counts_out) {
  const PartitionConfig c = PartitionConfig::load(config_path);
  EXPECT_EQ(c.num_nodes, d.num_nodes());
  EXPECT_EQ(c.num_edges, d.num_edges());
  EXPECT_EQ(c.ntypes.size(), d.node_types.size());
  EXPECT_EQ(c.etypes.size(), d.edge_types.size());
  std::vector<PartCounts>& counts = *counts_out;
  counts.assign(c.num_parts, PartCounts{});
  ASSERT_EQ(c.ntypes.size(), d.node_types.size());
  ASSERT_EQ(c.etypes.size(), d.edge_types.size());

  // new homogeneous node ID -> type-local original ID, from every partition.
  std::vector<int64_t> orig(c.num_nodes, -1);
  std::vector<std::vector<uint8_t>> node_seen(d.node_types.size());
  for (size_t t = 0; t < d.node_types.size(); ++t) node_seen[t].assign(d.node_types[t].count, 0);
  for (int p = 0; p < c.num_parts; ++p) {
    const IdRange nodes = c.part_nodes(p);
    const Array orig_nids = read_npy(c.path(c.parts[p].orig_nids));
    EXPECT_EQ(orig_nids.numel(), nodes.second - nodes.first);
    for (int64_t i = 0; i < nodes.second - nodes.first; ++i) {
      const int64_t v = nodes.first + i;
      const int t = c.node_type_of(v);
      const int64_t o = orig_nids.data<int64_t>()[i];
      orig[v] = o;
      ASSERT_TRUE(o >= 0 && o < d.node_types[t].count) << "orig nid out of range";
      EXPECT_EQ(node_seen[t][o]++, 0) << "node " << o << " of type " << c.ntypes[t] << " owned twice";
    }
  }
  for (size_t t = 0; t < d.node_types.size(); ++t)
    EXPECT_EQ(std::count(node_seen[t].begin(), node_seen[t].end(), 0), 0) << "unowned " << c.ntypes[t] << " nodes";

  std::vector<std::vector<uint8_t>> edge_seen(d.edge_types.size());
  for (size_t k = 0; k < d.edge_types.size(); ++k) edge_seen[k].assign(d.edge_types[k].count(), 0);
  const PartitionBook book(c);
  EXPECT_EQ(book.typed_edge(-1).etype, -1);
  EXPECT_EQ(book.typed_edge(c.num_edges).etype, -1);
  if (!c.etypes.empty()) {
    EXPECT_THROW(book.homogeneous_edge(0, book.edge_space(0).size()), Error);
  }
  for (int p = 0; p < c.num_parts; ++p) {
    const IdRange nodes = c.part_nodes(p);
    const IdRange edges = c.part_edges(p);
    const std::string g = c.path(c.parts[p].part_graph);
    const Array indptr = read_npy(g + "/indptr.npy"), indices = read_npy(g + "/indices.npy"), eids = read_npy(g + "/eids.npy");
    Array etypes;
    if (d.edge_types.size() > 1) etypes = read_npy(g + "/etypes.npy");
    const Array orig_eids = read_npy(c.path(c.parts[p].orig_eids));
    counts[p].nodes = nodes.second - nodes.first;
    counts[p].edges = edges.second - edges.first;
    for (int64_t local = 0; local < nodes.second - nodes.first; ++local) {
      const int64_t v = nodes.first + local;
      for (int64_t j = indptr.data<int64_t>()[local]; j < indptr.data<int64_t>()[local + 1]; ++j) {
        const int k = etypes.empty_handle() ? 0 : etypes.data<int32_t>()[j];
        const int64_t eid = eids.data<int64_t>()[j];
        ASSERT_TRUE(eid >= c.edge_map[k][p].first && eid < c.edge_map[k][p].second) << "edge outside its owner's range";
        // The book maps the homogeneous edge ID to its type and type-local ID, owned by p, and back.
        const PartitionBook::TypedEdge typed = book.typed_edge(eid);
        ASSERT_EQ(typed.etype, k) << "edge " << eid;
        ASSERT_EQ(book.edge_space(k).owner(typed.id), p) << "edge " << eid;
        ASSERT_EQ(book.homogeneous_edge(k, typed.id), eid);
        const int64_t oe = orig_eids.data<int64_t>()[eid - edges.first];
        const EdgeType& et = d.edge_types[k];
        ASSERT_TRUE(oe >= 0 && oe < et.count());
        EXPECT_EQ(edge_seen[k][oe]++, 0) << "edge " << oe << " stored twice";
        const int64_t u = indices.data<int64_t>()[j];
        ASSERT_EQ(c.ntypes[c.node_type_of(u)], et.src_type);
        ASSERT_EQ(c.ntypes[c.node_type_of(v)], et.dst_type);
        ASSERT_EQ(orig[u], et.src.data<int64_t>()[oe]) << "wrong source after reshuffle";
        ASSERT_EQ(orig[v], et.dst.data<int64_t>()[oe]) << "wrong destination after reshuffle";
      }
    }
    // Node data, compared row by row through original IDs.
    for (size_t t = 0; t < d.node_types.size(); ++t) {
      const NodeType& nt = d.node_types[t];
      const IdRange r = c.node_map[t][p];
      const std::string dir = c.path(c.parts[p].node_feats) + "/" + nt.name;
      for (const auto& [key, a] : nt.data) {
        const Array part = read_npy(dir + "/" + key + ".npy");
        ASSERT_EQ(part.rows(), r.second - r.first) << key;
        const size_t rb = a.row_bytes();
        for (int64_t i = 0; i < part.rows(); ++i)
          ASSERT_EQ(0, std::memcmp(static_cast<const char*>(part.raw()) + i * rb,
                                   static_cast<const char*>(a.raw()) + orig[r.first + i] * rb, rb))
              << nt.name << "." << key << " row of original node " << orig[r.first + i];
      }
      for (auto [key, ids] : {std::pair{"train_mask", &nt.train}, {"val_mask", &nt.val}, {"test_mask", &nt.test}}) {
        if (ids->empty_handle()) continue;
        std::vector<uint8_t> member(nt.count, 0);
        for (int64_t i = 0; i < ids->numel(); ++i) member[ids->data<int64_t>()[i]] = 1;
        const Array mask = read_npy(dir + "/" + key + ".npy");
        ASSERT_EQ(mask.rows(), r.second - r.first);
        for (int64_t i = 0; i < mask.rows(); ++i) {
          ASSERT_EQ(static_cast<const uint8_t*>(mask.raw())[i] != 0, member[orig[r.first + i]] != 0) << key;
          if (std::string(key) == "train_mask") counts[p].train += member[orig[r.first + i]];
        }
      }
    }
    for (size_t k = 0; k < d.edge_types.size(); ++k) {
      const EdgeType& et = d.edge_types[k];
      const IdRange r = c.edge_map[k][p];
      for (const auto& [key, a] : et.data) {
        const Array part = read_npy(c.path(c.parts[p].edge_feats) + "/" + et.canonical() + "/" + key + ".npy");
        ASSERT_EQ(part.rows(), r.second - r.first);
        const size_t rb = a.row_bytes();
        for (int64_t i = 0; i < part.rows(); ++i) {
          const int64_t oe = orig_eids.data<int64_t>()[r.first + i - edges.first];
          ASSERT_EQ(0, std::memcmp(static_cast<const char*>(part.raw()) + i * rb, static_cast<const char*>(a.raw()) + oe * rb, rb));
        }
      }
    }
  }
  for (size_t k = 0; k < d.edge_types.size(); ++k)
    EXPECT_EQ(std::count(edge_seen[k].begin(), edge_seen[k].end(), 0), 0) << "edges of " << c.etypes[k] << " not stored";
  for (const auto& [key, a] : d.extra) {
    const Array copy = read_npy(c.path(c.extra.at(key)));
    EXPECT_EQ(copy.shape(), a.shape());
    EXPECT_EQ(0, std::memcmp(copy.raw(), a.raw(), a.nbytes())) << "extra " << key;
  }
}

double max_deviation(const std::vector<PartCounts>& parts, int64_t PartCounts::*field) {
  double mean = 0;
  for (const auto& p : parts) mean += p.*field;
  mean /= parts.size();
  double dev = 0;
  for (const auto& p : parts) dev = std::max(dev, std::abs(p.*field - mean) / std::max(mean, 1e-9));
  return dev;
}

}  // namespace tessera::testing

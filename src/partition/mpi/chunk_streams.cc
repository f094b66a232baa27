#include "partition/mpi/chunk_streams.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "tessera/base/error.h"

namespace tessera {

IdLayout agree_id_layout(const MpiWorld& world, const ChunkedGraph& g) {
  IdLayout layout;
  layout.node_offset.assign(1, 0);
  for (int64_t n : g.num_nodes) layout.node_offset.push_back(layout.node_offset.back() + n);
  const int num_etypes = static_cast<int>(g.edge_types.size());
  // One slot per (edge type, chunk); each rank fills those of its chunks.
  std::vector<int64_t> counts;
  std::vector<size_t> first_slot(num_etypes);
  for (int k = 0; k < num_etypes; ++k) {
    first_slot[k] = counts.size();
    counts.resize(counts.size() + g.edges[k].paths.size(), 0);
  }
  for (int k = 0; k < num_etypes; ++k) {
    const int64_t chunks = static_cast<int64_t>(g.edges[k].paths.size());
    for (int64_t c = 0; c < chunks; ++c) {
      if (chunk_reader(c, chunks, world.size()) != world.rank()) continue;
      if (!g.edges_per_chunk[k].empty()) {
        counts[first_slot[k] + c] = g.edges_per_chunk[k][c];
        continue;
      }
      std::vector<int64_t> src, dst;
      read_edge_chunk(g, k, static_cast<int>(c), &src, &dst);
      counts[first_slot[k] + c] = static_cast<int64_t>(src.size());
    }
  }
  world.sum_in_place(&counts);
  layout.edge_offset.assign(1, 0);
  layout.edge_chunk_start.resize(num_etypes);
  for (int k = 0; k < num_etypes; ++k) {
    auto& start = layout.edge_chunk_start[k];
    start.assign(1, 0);
    for (size_t c = 0; c < g.edges[k].paths.size(); ++c) start.push_back(start.back() + counts[first_slot[k] + c]);
    if (start.back() != g.num_edges[k])
      fail("{}/metadata.json: the chunks of edges[\"{}\"] hold {} edges but metadata.json says {}", g.dir,
           g.edge_types[k], start.back(), g.num_edges[k]);
    layout.edge_offset.push_back(layout.edge_offset.back() + start.back());
  }
  const int64_t n = layout.num_nodes();
  for (int r = 0; r <= world.size(); ++r) layout.vertex_start.push_back(n * r / world.size());
  return layout;
}

void balance_vertex_ranges(const MpiWorld& world, const ChunkedGraph& graph, IdLayout* layout) {
  const int ranks = world.size();
  const int64_t n = layout->num_nodes();
  if (ranks == 1 || n < ranks) return;
  // Node and adjacency counts in equal ID buckets, many per rank, so that a
  // boundary can fall within a bucket's width of its target.
  const int64_t buckets = std::min<int64_t>(n, int64_t{4096} * ranks);
  auto bucket_of = [&](int64_t v) { return static_cast<int64_t>(static_cast<__int128>(v) * buckets / n); };
  auto bucket_begin = [&](int64_t b) {
    return static_cast<int64_t>((static_cast<__int128>(b) * n + buckets - 1) / buckets);
  };
  std::vector<int64_t> weight(buckets, 0);
  EdgeStream stream(graph, *layout, world.rank(), ranks);
  std::vector<int64_t> u, v, g;
  for (stream.next(int64_t{1} << 20, &u, &v, &g); !u.empty(); stream.next(int64_t{1} << 20, &u, &v, &g))
    for (size_t i = 0; i < u.size(); ++i)
      if (u[i] != v[i]) {
        ++weight[bucket_of(u[i])];
        ++weight[bucket_of(v[i])];
      }
  world.sum_in_place(&weight);
  for (int64_t b = 0; b < buckets; ++b) weight[b] += bucket_begin(b + 1) - bucket_begin(b);
  int64_t total = 0;
  for (int64_t w : weight) total += w;
  std::vector<int64_t> start{0};
  int64_t seen = 0;
  for (int64_t b = 0; b < buckets && static_cast<int>(start.size()) < ranks; ++b) {
    seen += weight[b];
    // Rank r starts after the bucket that takes the running weight to r / ranks of the total.
    while (static_cast<int>(start.size()) < ranks && seen * ranks >= total * static_cast<int64_t>(start.size()))
      start.push_back(bucket_begin(b + 1));
  }
  start.push_back(n);
  // Every rank keeps at least one node.
  for (int r = 1; r < ranks; ++r) start[r] = std::max(start[r], start[r - 1] + 1);
  for (int r = ranks - 1; r >= 1; --r) start[r] = std::min(start[r], start[r + 1] - 1);
  layout->vertex_start = start;
}

EdgeStream::EdgeStream(const ChunkedGraph& graph, const IdLayout& layout, int rank, int ranks)
    : graph_(graph), layout_(layout), ranks_(ranks) {
  for (int k = 0; k < static_cast<int>(graph.edge_types.size()); ++k) {
    const int64_t chunks = static_cast<int64_t>(graph.edges[k].paths.size());
    for (int64_t c = 0; c < chunks; ++c) {
      if (chunk_reader(c, chunks, ranks) != rank) continue;
      chunks_.emplace_back(k, static_cast<int>(c));
      chunk_first_g_.push_back(layout.edge_offset[k] + layout.edge_chunk_start[k][c]);
      chunk_position_.push_back(total_);
      total_ += layout.edge_chunk_start[k][c + 1] - layout.edge_chunk_start[k][c];
    }
  }
}

void EdgeStream::next(int64_t max, std::vector<int64_t>* u, std::vector<int64_t>* v, std::vector<int64_t>* g) {
  u->clear();
  v->clear();
  g->clear();
  while (static_cast<int64_t>(u->size()) < max) {
    if (read_ == static_cast<int64_t>(src_.size())) {
      src_.clear();
      dst_.clear();
      read_ = 0;
      if (next_chunk_ == chunks_.size()) return;
      const auto [k, c] = chunks_[next_chunk_];
      chunk_g_ = chunk_first_g_[next_chunk_++];
      read_edge_chunk(graph_, k, c, &src_, &dst_);
      src_offset_ = graph_.src_type(k);
      dst_offset_ = graph_.dst_type(k);
      continue;
    }
    const int64_t take = std::min<int64_t>(max - static_cast<int64_t>(u->size()), src_.size() - read_);
    const int64_t so = layout_.node_offset[src_offset_], dof = layout_.node_offset[dst_offset_];
    for (int64_t i = read_; i < read_ + take; ++i) {
      u->push_back(so + src_[i]);
      v->push_back(dof + dst_[i]);
      g->push_back(chunk_g_ + i);
    }
    read_ += take;
  }
}

int64_t EdgeStream::position_of(int64_t g) const {
  const int i = IdLayout::range_of(chunk_first_g_, g);
  return chunk_position_[i] + (g - chunk_first_g_[i]);
}

int EdgeStream::reader_of(int64_t g) const {
  const int k = layout_.edge_type_of(g);
  const auto& start = layout_.edge_chunk_start[k];
  const int c = IdLayout::range_of(start, g - layout_.edge_offset[k]);
  return chunk_reader(c, static_cast<int64_t>(start.size()) - 1, ranks_);
}

DataLayout agree_data_layout(const MpiWorld& world, const ChunkFiles& files, int64_t rows, const std::string& what) {
  const int64_t chunks = static_cast<int64_t>(files.paths.size());
  nlohmann::json mine = nlohmann::json::array();
  for (int64_t c = 0; c < chunks; ++c) {
    if (chunk_reader(c, chunks, world.size()) != world.rank()) continue;
    const Array a = read_data_chunk(files, static_cast<size_t>(c));
    mine.push_back({c, dtype_name(a.dtype()), a.shape()});
  }
  DataLayout layout;
  std::vector<int64_t> chunk_rows(chunks, -1);
  const nlohmann::json* first = nullptr;
  std::vector<nlohmann::json> all;
  for (const std::string& text : world.gather_all(mine.dump())) all.push_back(nlohmann::json::parse(text));
  for (const nlohmann::json& rank_chunks : all)
    for (const nlohmann::json& chunk : rank_chunks) {
      const int64_t c = chunk[0].get<int64_t>();
      std::vector<int64_t> shape = chunk[2].get<std::vector<int64_t>>();
      if (shape.empty()) fail("{}: chunk {} is a scalar, expected one row per item", files.paths[c], c);
      chunk_rows[c] = shape[0];
      if (first == nullptr) {
        first = &chunk;
        layout.dtype = dtype_from_name(chunk[1].get<std::string>());
        layout.shape = shape;
        continue;
      }
      const std::vector<int64_t> first_shape = (*first)[2].get<std::vector<int64_t>>();
      if (chunk[1] != (*first)[1] || !std::equal(shape.begin() + 1, shape.end(), first_shape.begin() + 1,
                                                  first_shape.end()))
        fail("{}: chunk {} of {} is {} {}, but chunk {} is {} {}", files.paths[c], c, what,
             chunk[1].get<std::string>(), chunk[2].dump(), (*first)[0].get<int64_t>(), (*first)[1].get<std::string>(),
             (*first)[2].dump());
    }
  layout.chunk_start.assign(1, 0);
  for (int64_t c = 0; c < chunks; ++c) layout.chunk_start.push_back(layout.chunk_start.back() + chunk_rows[c]);
  if (layout.chunk_start.back() != rows)
    fail("{}: the chunks of {} hold {} rows but the type has {}", files.where, what, layout.chunk_start.back(), rows);
  if (layout.shape.empty()) layout.shape = {0};
  layout.shape[0] = rows;
  layout.row_bytes = dtype_size(layout.dtype);
  for (size_t i = 1; i < layout.shape.size(); ++i) layout.row_bytes *= static_cast<size_t>(layout.shape[i]);
  return layout;
}

}  // namespace tessera

// The partitioner's shuffles: each edge to its destination's part, with
// both ends renumbered, and each data row (node or edge) to the part that
// owns it, in bounded all-to-all rounds.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "partition/mpi/partitioner.h"
#include "tessera/base/error.h"

namespace tessera::mpi_partition {

void Partitioner::shuffle_edges() {
  // Look up both endpoints' new IDs, then send each edge to its destination's part.
  const int64_t first = first_vertex();
  EdgeStream stream(graph_, layout_, me_, ranks_);
  const bool keep_parts = std::any_of(graph_.edge_data.begin(), graph_.edge_data.end(),
                                      [](const auto& names) { return !names.empty(); });
  if (keep_parts) edge_part_.reserve(stream.total());
  std::vector<ShuffledEdge> mine;
  std::vector<int64_t> u, v, g;
  const int64_t rounds = world_.rounds_for(stream.total(), kBatchEdges);
  auto owner = [&](int64_t id) { return layout_.vertex_owner(id); };
  auto answer = [&](int64_t id) { return new_id_[id - first]; };
  for (int64_t round = 0; round < rounds; ++round) {
    stream.next(kBatchEdges, &u, &v, &g);
    const std::vector<int64_t> nu = distributed_lookup(world_, u.data(), static_cast<int64_t>(u.size()), owner, answer);
    const std::vector<int64_t> nv = distributed_lookup(world_, v.data(), static_cast<int64_t>(v.size()), owner, answer);
    std::vector<std::vector<ShuffledEdge>> out(ranks_);
    for (size_t i = 0; i < u.size(); ++i) {
      const int p = part_of_new(nv[i]);
      out[p].push_back({nu[i], nv[i], g[i]});
      if (keep_parts) edge_part_.push_back(p);
    }
    const std::vector<ShuffledEdge> in = world_.exchange(out);
    mine.insert(mine.end(), in.begin(), in.end());
  }

  // The single-machine CSC: in-edges of each owned node in global edge order.
  std::sort(mine.begin(), mine.end(), [](const ShuffledEdge& a, const ShuffledEdge& b) { return a.g < b.g; });
  const int num_etypes = static_cast<int>(graph_.edge_types.size());
  std::vector<int64_t> ecount(static_cast<size_t>(parts_) * num_etypes, 0);
  for (const ShuffledEdge& e : mine) ++ecount[static_cast<size_t>(me_) * num_etypes + layout_.edge_type_of(e.g)];
  world_.sum_in_place(&ecount);
  edge_map_.assign(num_etypes, std::vector<IdRange>(parts_));
  int64_t next = 0;
  for (int p = 0; p < parts_; ++p)
    for (int k = 0; k < num_etypes; ++k) {
      const int64_t n = ecount[static_cast<size_t>(p) * num_etypes + k];
      edge_map_[k][p] = {next, next + n};
      next += n;
    }
  const int64_t node_base = part_start_[me_];
  const int64_t owned = part_start_[me_ + 1] - node_base;
  const int64_t edge_base = edge_map_.front()[me_].first;
  const int64_t m = static_cast<int64_t>(mine.size());
  indptr_.assign(owned + 1, 0);
  for (const ShuffledEdge& e : mine) ++indptr_[e.v - node_base + 1];
  for (int64_t i = 0; i < owned; ++i) indptr_[i + 1] += indptr_[i];
  indices_.resize(m);
  eids_.resize(m);
  orig_eid_.resize(m);
  if (num_etypes > 1) etypes_.resize(m);
  if (keep_parts) {
    sorted_g_.resize(m);
    eid_of_sorted_.resize(m);
  }
  std::vector<int64_t> fill(indptr_.begin(), indptr_.end() - 1);
  std::vector<int64_t> ecursor(num_etypes);
  for (int k = 0; k < num_etypes; ++k) ecursor[k] = edge_map_[k][me_].first;
  for (int64_t j = 0; j < m; ++j) {
    const ShuffledEdge& e = mine[j];
    const int k = layout_.edge_type_of(e.g);
    const int64_t pos = fill[e.v - node_base]++;
    // One edge type: IDs follow the CSC order, as the single-machine partitioner's do.
    const int64_t eid = num_etypes == 1 ? edge_base + pos : ecursor[k]++;
    indices_[pos] = e.u;
    eids_[pos] = eid;
    orig_eid_[eid - edge_base] = e.g - layout_.edge_offset[k];
    if (num_etypes > 1) etypes_[pos] = k;
    cut_edges_ += part_of_new(e.u) != me_;
    if (keep_parts) {
      sorted_g_[j] = e.g;
      eid_of_sorted_[j] = eid;
    }
  }
}

Array Partitioner::shuffle_rows(const ChunkFiles& files, const DataLayout& data, int64_t key_base, int64_t owned_rows,
                                bool edge_rows, int type) {
  // Rows travel with the key their owner places them by: a node's new ID, or an edge's global order.
  Array result = Array::zeros(data.dtype, [&] {
    std::vector<int64_t> shape = data.shape;
    shape[0] = owned_rows;
    return shape;
  }());
  const size_t row = data.row_bytes;
  const int64_t batch = std::max<int64_t>(1, kBatchBytes / static_cast<int64_t>(std::max<size_t>(row, 8)));
  const int64_t chunks = static_cast<int64_t>(files.paths.size());
  int64_t local_rows = 0;
  std::vector<int64_t> my_chunks;
  for (int64_t c = 0; c < chunks; ++c)
    if (chunk_reader(c, chunks, ranks_) == me_) {
      my_chunks.push_back(c);
      local_rows += data.chunk_start[c + 1] - data.chunk_start[c];
    }
  const int64_t first = first_vertex();
  EdgeStream stream(graph_, layout_, me_, ranks_);
  size_t chunk_index = 0;
  int64_t row_in_chunk = 0;
  Array chunk;
  const int64_t rounds = world_.rounds_for(local_rows, batch);
  for (int64_t round = 0; round < rounds; ++round) {
    // The next batch of this rank's rows: their keys, and where they lie.
    std::vector<int64_t> keys;
    std::vector<const char*> sources;
    std::vector<Array> held{chunk};  // every chunk the batch's rows point into stays mapped
    while (static_cast<int64_t>(keys.size()) < batch && chunk_index < my_chunks.size()) {
      const int64_t c = my_chunks[chunk_index];
      if (row_in_chunk == 0) {
        chunk = read_data_chunk(files, static_cast<size_t>(c));
        held.push_back(chunk);
      }
      const int64_t take = std::min(batch - static_cast<int64_t>(keys.size()), chunk.rows() - row_in_chunk);
      for (int64_t j = row_in_chunk; j < row_in_chunk + take; ++j) {
        keys.push_back(key_base + data.chunk_start[c] + j);
        sources.push_back(static_cast<const char*>(chunk.raw()) + j * row);
      }
      row_in_chunk += take;
      if (row_in_chunk == chunk.rows()) {
        ++chunk_index;
        row_in_chunk = 0;
      }
    }
    std::vector<int64_t> dest;
    if (edge_rows) {
      dest = distributed_lookup(world_, keys.data(), static_cast<int64_t>(keys.size()),
                                [&](int64_t g) { return stream.reader_of(g); },
                                [&](int64_t g) { return static_cast<int64_t>(edge_part_[stream.position_of(g)]); });
    } else {
      const std::vector<int64_t> ids = distributed_lookup(
          world_, keys.data(), static_cast<int64_t>(keys.size()), [&](int64_t id) { return layout_.vertex_owner(id); },
          [&](int64_t id) { return new_id_[id - first]; });
      for (size_t i = 0; i < ids.size(); ++i) {
        keys[i] = ids[i];
        dest.push_back(part_of_new(ids[i]));
      }
    }
    std::vector<std::vector<char>> out(ranks_);
    for (size_t i = 0; i < keys.size(); ++i) {
      std::vector<char>& buffer = out[dest[i]];
      const size_t at = buffer.size();
      buffer.resize(at + sizeof(int64_t) + row);
      std::memcpy(buffer.data() + at, &keys[i], sizeof(int64_t));
      std::memcpy(buffer.data() + at + sizeof(int64_t), sources[i], row);
    }
    const std::vector<char> in = world_.exchange(out);
    for (size_t at = 0; at < in.size(); at += sizeof(int64_t) + row) {
      int64_t key;
      std::memcpy(&key, in.data() + at, sizeof(int64_t));
      int64_t local;
      if (edge_rows) {
        const int64_t j = std::lower_bound(sorted_g_.begin(), sorted_g_.end(), key) - sorted_g_.begin();
        local = eid_of_sorted_[j] - edge_map_[type][me_].first;
      } else {
        local = key - node_map_[type][me_].first;
      }
      std::memcpy(static_cast<char*>(result.mutable_raw()) + local * row, in.data() + at + sizeof(int64_t), row);
    }
  }
  return result;
}

}  // namespace tessera::mpi_partition

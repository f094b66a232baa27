#include "partition/mpi/partitioner.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <filesystem>
#include <map>

#include <unistd.h>

#include <fmt/format.h>

#include "io/chunked_format.h"
#include "io/staged_dir.h"
#include "partition/mpi/chunk_streams.h"
#include "partition/mpi/memory_estimate.h"
#include "partition/mpi/hub_sampling.h"
#include "partition/mpi/mpi_world.h"
#include "partition/mpi/periphery_fold.h"
#include "partition/mpi/scotch_partition.h"
#include "partition/mpi/scotch_strategy.h"
#include "partition/part_files.h"
#include "tessera/base/error.h"
#include "tessera/base/timer.h"
#include "tessera/partition/partition_config.h"

namespace fs = std::filesystem;

namespace tessera {
namespace mpi_partition {

std::vector<int64_t> Partitioner::train_nodes_here() {
  // Homogeneous IDs of the training nodes in this rank's train_mask chunks.
  std::vector<int64_t> train;
  for (size_t t = 0; t < graph_.node_types.size(); ++t) {
    auto it = graph_.node_data[t].find("train_mask");
    if (it == graph_.node_data[t].end()) continue;
    const DataLayout data = agree_data_layout(world_, it->second, graph_.num_nodes[t],
                                              fmt::format("node_data[\"{}\"][\"train_mask\"]", graph_.node_types[t]));
    const int64_t chunks = static_cast<int64_t>(it->second.paths.size());
    for (int64_t c = 0; c < chunks; ++c) {
      if (chunk_reader(c, chunks, ranks_) != me_) continue;
      const Array mask = read_data_chunk(it->second, static_cast<size_t>(c));
      const auto* bytes = static_cast<const uint8_t*>(mask.raw());
      const size_t width = data.row_bytes;
      for (int64_t j = 0; j < mask.rows(); ++j)
        if (std::any_of(bytes + j * width, bytes + (j + 1) * width, [](uint8_t b) { return b != 0; }))
          train.push_back(layout_.node_offset[t] + data.chunk_start[c] + j);
    }
  }
  return train;
}

LocalGraph Partitioner::adjacency() {
  // Both directions of every edge go to the rank holding its endpoint in
  // PT-Scotch's block distribution.
  const int64_t first = first_vertex(), count = local_vertices();
  // Kept batch by batch as received: one growing vector would peak at twice the arcs while it reallocates.
  std::vector<std::vector<Arc>> received;
  EdgeStream stream(graph_, layout_, me_, ranks_);
  std::vector<int64_t> u, v, g;
  const int64_t rounds = world_.rounds_for(stream.total(), kBatchEdges);
  for (int64_t round = 0; round < rounds; ++round) {
    stream.next(kBatchEdges, &u, &v, &g);
    std::vector<std::vector<Arc>> out(ranks_);
    for (size_t i = 0; i < u.size(); ++i) {
      if (u[i] == v[i]) {
        out[layout_.vertex_owner(v[i])].push_back({v[i], kInEdgeOnly});
        continue;
      }
      out[layout_.vertex_owner(v[i])].push_back({v[i], u[i] | kInEdge});
      out[layout_.vertex_owner(u[i])].push_back({u[i], v[i]});
    }
    received.push_back(world_.exchange(out));
  }

  std::vector<int64_t> in_degree(count, 0);
  std::vector<int64_t> degree(count + 1, 0);
  for (const std::vector<Arc>& arcs : received)
    for (const Arc& a : arcs) {
      const int64_t local = a.target - first;
      if (a.other & (kInEdge | kInEdgeOnly)) ++in_degree[local];
      if (!(a.other & kInEdgeOnly)) ++degree[local + 1];
    }
  for (int64_t i = 0; i < count; ++i) degree[i + 1] += degree[i];
  LocalGraph lg;
  lg.adjncy.resize(degree[count]);
  {
    std::vector<int64_t> cursor(degree.begin(), degree.end() - 1);
    for (std::vector<Arc>& arcs : received) {
      for (const Arc& a : arcs)
        if (!(a.other & kInEdgeOnly)) lg.adjncy[cursor[a.target - first]++] = a.other & kIdMask;
      arcs = {};
    }
  }
  // Sorted, duplicates merged, compacted in place: METIS's input, distributed.
  lg.xadj.assign(count + 1, 0);
  int64_t write = 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t* b = lg.adjncy.data() + degree[i];
    int64_t* e = lg.adjncy.data() + degree[i + 1];
    std::sort(b, e);
    e = std::unique(b, e);
    std::copy(b, e, lg.adjncy.data() + write);
    write += e - b;
    lg.xadj[i + 1] = write;
  }
  lg.adjncy.resize(write);
  lg.adjncy.shrink_to_fit();

  // One weight (PT-Scotch balances one): the node itself, its in-edges with
  // --balance-edges, and with --balance-train a weight on training nodes
  // equal in total to everything else, so that half the balance is theirs.
  lg.weights.assign(count, 1);
  if (options_.balance_edges)
    for (int64_t i = 0; i < count; ++i) lg.weights[i] += in_degree[i];
  if (options_.balance_train) {
    std::vector<std::vector<int64_t>> out(ranks_);
    for (int64_t id : train_nodes_here()) out[layout_.vertex_owner(id)].push_back(id);
    const std::vector<int64_t> train = world_.exchange(out);
    const int64_t total_train = world_.sum(static_cast<int64_t>(train.size()));
    int64_t other_weight = 0;
    for (int64_t w : lg.weights) other_weight += w;
    other_weight = world_.sum(other_weight);
    if (total_train >= 4 * parts_) {
      const int64_t bonus = std::max<int64_t>(1, other_weight / total_train);
      for (int64_t id : train) lg.weights[id - first] += bonus;
    }
  }
  return lg;
}

// With TESSERA_DEBUG=1, each rank's memory after each step of the assignment (to calibrate --dry-run).
void Partitioner::trace(const char* step, const LocalGraph& g) const {
  static const bool on = std::getenv("TESSERA_DEBUG") != nullptr;
  if (!on) return;
  fmt::print(stderr, "rank {}: after {} ({:.1f} s): {} nodes, {} adjacency entries here; peak RSS {:.3f} GB\n", me_,
             step, assign_timer_.seconds(), g.xadj.empty() ? 0 : g.xadj.size() - 1, g.adjncy.size(),
             peak_rss_bytes() / 1e9);
}

std::vector<int32_t> Partitioner::require_no_empty_part(std::vector<int32_t> part) const {
  std::vector<int64_t> sizes(parts_, 0);
  for (int32_t p : part) ++sizes[p];
  world_.sum_in_place(&sizes);  // the same on every rank, so all fail together
  int64_t nodes = 0;
  for (int64_t n : sizes) nodes += n;
  for (int p = 0; p < parts_; ++p)
    if (sizes[p] == 0)
      fail("partition {} of {} is empty, even after placing the nodes PT-Scotch did not see ({} nodes in all); use "
           "fewer parts",
           p, parts_, nodes);
  return part;
}

std::vector<int32_t> Partitioner::assign() {
  if (options_.method == "parmetis") {
    assign_timer_.reset();
    LocalGraph lg = adjacency();
    trace("adjacency", lg);
    auto owner = [&](int64_t v) { return layout_.vertex_owner(v); };
    // Sampling first: a node whose edges all went is placed like an isolated one, and one left with a single
    // edge follows that neighbour.
    sampled_out_ = sample_hub_edges(world_, &lg, first_vertex(), owner, kSampledDegree, options_.seed);
    trace("sampling", lg);
    PeripheryFold fold(world_, lg, first_vertex(), owner);
    // Too little left to fold: PT-Scotch sees the whole graph.
    if (fold.reduced_nodes() < 2 * parts_)
      return require_no_empty_part(scotch_partition(world_, &lg, parts_, options_.seed, kScotchDefaultImbalance));
    lg = {};
    folded_nodes_ = fold.folded_nodes();
    trace("fold", fold.reduced());
    scotch_imbalance_ = imbalance_with_room(fold.total_weight(), fold.placed_after_weight(), parts_);
    const std::vector<int32_t> reduced_parts =
        scotch_partition(world_, &fold.reduced(), parts_, options_.seed, scotch_imbalance_);
    trace("PT-Scotch", fold.reduced());
    return require_no_empty_part(fold.expand(reduced_parts, parts_));
  }
  // METIS and random see the whole graph: only with one rank, where they
  // give exactly what the single-machine partitioner gives.
  const Dataset d = read_chunked_dataset(request_.input);
  return options_.method == "metis" ? metis_assignment(d, options_) : random_assignment(d, options_);
}

void Partitioner::number(const std::vector<int32_t>& part) {
  // New IDs: partition-major, type-minor, original order within a (part,
  // type): a rank's nodes come after those of lower ranks, as IDs do.
  const int num_ntypes = static_cast<int>(graph_.node_types.size());
  const int64_t first = first_vertex(), count = local_vertices();
  auto slot = [&](int rank, int p, int t) { return (static_cast<size_t>(rank) * parts_ + p) * num_ntypes + t; };
  std::vector<int64_t> counts(static_cast<size_t>(ranks_) * parts_ * num_ntypes, 0);
  for (int64_t i = 0; i < count; ++i) ++counts[slot(me_, part[i], layout_.node_type_of(first + i))];
  world_.sum_in_place(&counts);
  node_map_.assign(num_ntypes, std::vector<IdRange>(parts_));
  std::vector<int64_t> cursor(static_cast<size_t>(parts_) * num_ntypes);
  int64_t next = 0;
  for (int p = 0; p < parts_; ++p)
    for (int t = 0; t < num_ntypes; ++t) {
      int64_t total = 0, before_me = 0;
      for (int r = 0; r < ranks_; ++r) {
        if (r == me_) before_me = total;
        total += counts[slot(r, p, t)];
      }
      node_map_[t][p] = {next, next + total};
      cursor[static_cast<size_t>(p) * num_ntypes + t] = next + before_me;
      next += total;
    }
  part_start_.clear();
  for (int p = 0; p < parts_; ++p) part_start_.push_back(node_map_.front()[p].first);
  part_start_.push_back(next);
  new_id_.resize(count);
  for (int64_t i = 0; i < count; ++i)
    new_id_[i] = cursor[static_cast<size_t>(part[i]) * num_ntypes + layout_.node_type_of(first + i)]++;
}

void Partitioner::shuffle_nodes(const std::vector<int32_t>& part) {
  // Each node's original type-local ID goes to the rank writing its part.
  const int64_t first = first_vertex(), count = local_vertices();
  orig_nid_.assign(part_start_[me_ + 1] - part_start_[me_], -1);
  const int64_t batch = kBatchEdges;
  const int64_t rounds = world_.rounds_for(count, batch);
  for (int64_t round = 0; round < rounds; ++round) {
    std::vector<std::vector<int64_t>> out(ranks_);
    for (int64_t i = round * batch; i < std::min(count, (round + 1) * batch); ++i) {
      const int64_t v = first + i;
      out[part[i]].push_back(new_id_[i]);
      out[part[i]].push_back(v - layout_.node_offset[layout_.node_type_of(v)]);
    }
    const std::vector<int64_t> in = world_.exchange(out);
    for (size_t j = 0; j < in.size(); j += 2) orig_nid_[in[j] - part_start_[me_]] = in[j + 1];
  }
}

static Array mask_to_bool(const Array& mask) {
  Array out = Array::zeros(DType::kBool, {mask.rows()});
  const size_t width = mask.row_bytes();
  const auto* in = static_cast<const uint8_t*>(mask.raw());
  auto* o = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t i = 0; i < mask.rows(); ++i)
    o[i] = std::any_of(in + i * width, in + (i + 1) * width, [](uint8_t b) { return b != 0; });
  return out;
}

void Partitioner::write(double* write_s) {
  Timer timer;
  // Every rank agrees on one staging name (rank 0's); on a shared file
  // system they fill one folder, on local ones each its own.
  const std::string tag = world_.broadcast(fmt::format("{}-{}", ::getpid(), std::chrono::steady_clock::now()
                                                                                 .time_since_epoch().count()), 0);
  StagedDirectory out(options_.out_dir, tag);
  const PartitionFiles files = part_files(me_);
  const std::string root = out.path();
  const std::string gdir = out.subdir(files.part_graph);
  write_values(gdir + "/indptr.npy", indptr_.data(), static_cast<int64_t>(indptr_.size()));
  write_values(gdir + "/indices.npy", indices_.data(), static_cast<int64_t>(indices_.size()));
  write_values(gdir + "/eids.npy", eids_.data(), static_cast<int64_t>(eids_.size()));
  if (!etypes_.empty()) write_values(gdir + "/etypes.npy", etypes_.data(), static_cast<int64_t>(etypes_.size()));
  write_values(root + "/" + files.orig_nids, orig_nid_.data(), static_cast<int64_t>(orig_nid_.size()));
  write_values(root + "/" + files.orig_eids, orig_eid_.data(), static_cast<int64_t>(orig_eid_.size()));
  for (const auto& [ntype, arrays] : node_arrays_) {
    const std::string dir = out.subdir(node_data_folder(files, ntype));
    for (const auto& [name, a] : arrays) write_npy(dir + "/" + name + ".npy", a);
  }
  for (const auto& [etype, arrays] : edge_arrays_) {
    const std::string dir = out.subdir(edge_data_folder(files, etype));
    for (const auto& [name, a] : arrays) write_npy(dir + "/" + name + ".npy", a);
  }

  PartitionConfig config;
  config.graph_name = options_.graph_name;
  config.part_method = options_.method;
  config.num_parts = parts_;
  config.num_nodes = layout_.num_nodes();
  config.num_edges = layout_.num_edges();
  config.ntypes = graph_.node_types;
  config.etypes = graph_.edge_types;
  config.node_map = node_map_;
  config.edge_map = edge_map_;
  config.node_feat_schema = node_schema_;
  config.edge_feat_schema = edge_schema_;
  for (int p = 0; p < parts_; ++p) config.parts.push_back(part_files(p));

  // Fault injection for the tests: a rank killed after writing, before the commit.
  if (const char* pause = std::getenv("TESSERA_FAULT_PARTITION_PAUSE_MS"))
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atol(pause)));

  // Every rank has written. Ranks that see the same folder (a shared file
  // system) leave it to the lowest of them; each such committer writes the
  // config, last, and renames the folder into place.
  world_.barrier();
  write_text_file(fmt::format("{}/.rank-{}", root, me_), "");
  world_.barrier();
  int committer = me_;
  for (int r = 0; r < me_; ++r)
    if (fs::exists(fmt::format("{}/.rank-{}", root, r))) {
      committer = r;
      break;
    }
  world_.barrier();
  if (committer == me_) {
    for (int r = 0; r < ranks_; ++r) fs::remove(fmt::format("{}/.rank-{}", root, r));
    write_text_file(root + "/" + options_.graph_name + ".json", config.to_json());
    out.commit();
  }
  world_.barrier();
  if (committer != me_) out.committed_by_another();
  *write_s = timer.seconds();
}

int Partitioner::run() {
  if (parts_ != ranks_)
    fail("--num-parts {} but {} ranks: distributed partitioning writes one partition per rank (start {} ranks)",
         parts_, ranks_, parts_);
  if (options_.method != "parmetis" && ranks_ > 1)
    fail("--method {} needs the whole graph in one process; with {} ranks use --method parmetis", options_.method,
         ranks_);
  if (options_.graph_name.find('/') != std::string::npos || options_.graph_name.empty())
    fail("--graph-name '{}' must be a non-empty name without '/'", options_.graph_name);
  Timer timer;
  layout_ = agree_id_layout(world_, graph_);
  if (parts_ > layout_.num_nodes())
    fail("--num-parts {} is larger than the number of nodes ({}): every partition needs a node", parts_,
         layout_.num_nodes());
  if (request_.dry_run) {
    const MemoryEstimate e = estimate_memory(world_, graph_, layout_, options_.balance_edges);
    const std::vector<std::string> lines = world_.gather_all(e.describe(me_, world_.host()));
    if (me_ == 0) {
      for (const std::string& line : lines) fmt::print("{}\n", line);
    }
    return 0;
  }
  if (options_.method == "parmetis") balance_vertex_ranges(world_, graph_, &layout_);
  const double layout_s = timer.seconds();
  timer.reset();
  const std::vector<int32_t> part = assign();
  const double assign_s = timer.seconds();
  timer.reset();
  number(part);
  shuffle_nodes(part);
  shuffle_edges();
  // Node data, then edge data: each array's rows to the rank that owns them.
  auto move_array = [&](const char* kind, const std::string& type, const std::string& name, const ChunkFiles& files,
                        int64_t rows, int64_t key_base, IdRange owned, bool edge_rows, int type_index) {
    const DataLayout data =
        agree_data_layout(world_, files, rows, fmt::format("{}[\"{}\"][\"{}\"]", kind, type, name));
    return shuffle_rows(files, data, key_base, owned.second - owned.first, edge_rows, type_index);
  };
  for (size_t t = 0; t < graph_.node_types.size(); ++t)
    for (const auto& [name, files] : graph_.node_data[t]) {
      const int ti = static_cast<int>(t);
      Array rows = move_array("node_data", graph_.node_types[t], name, files, graph_.num_nodes[t],
                              layout_.node_offset[t], node_map_[t][me_], false, ti);
      if (is_split_mask(name)) rows = mask_to_bool(rows);
      node_schema_[graph_.node_types[t]][name] = schema_of(rows.dtype(), rows.shape());
      node_arrays_[graph_.node_types[t]][name] = std::move(rows);
    }
  for (size_t k = 0; k < graph_.edge_types.size(); ++k)
    for (const auto& [name, files] : graph_.edge_data[k]) {
      Array rows = move_array("edge_data", graph_.edge_types[k], name, files, graph_.num_edges[k],
                              layout_.edge_offset[k], edge_map_[k][me_], true, static_cast<int>(k));
      edge_schema_[graph_.edge_types[k]][name] = schema_of(rows.dtype(), rows.shape());
      edge_arrays_[graph_.edge_types[k]][name] = std::move(rows);
    }
  new_id_ = {};
  const double shuffle_s = timer.seconds();
  double write_s = 0;
  write(&write_s);

  const int64_t cut = world_.sum(cut_edges_);
  const std::vector<int64_t> rss = world_.gather_all(peak_rss_bytes());
  if (me_ == 0) {
    const double ratio = layout_.num_edges() ? static_cast<double>(cut) / layout_.num_edges() : 0.0;
    const double total = layout_s + assign_s + shuffle_s + write_s;
    std::string rss_list;
    for (int64_t r : rss) rss_list += fmt::format("{}{:.3f}", rss_list.empty() ? "" : ", ", r / 1e9);
    if (request_.json) {
      std::string rss_json;
      for (int64_t r : rss) rss_json += fmt::format("{}{}", rss_json.empty() ? "" : ", ", r);
      fmt::print("{{\"graph_name\": \"{}\", \"num_parts\": {}, \"method\": \"{}\", \"ranks\": {}, \"read_s\": {:.3f}, "
                 "\"assign_s\": {:.3f}, \"shuffle_s\": {:.3f}, \"write_s\": {:.3f}, \"total_s\": {:.3f}, "
                 "\"edge_cut_ratio\": {:.5f}, \"folded_nodes\": {}, \"sampled_out_entries\": {}, "
                 "\"scotch_imbalance\": {:.3f}, \"peak_rss_bytes\": [{}]}}\n",
                 options_.graph_name, parts_, options_.method, ranks_, layout_s, assign_s, shuffle_s, write_s, total,
                 ratio, folded_nodes_, sampled_out_, scotch_imbalance_, rss_json);
    } else {
      fmt::print("partitioned {} into {} parts ({}, {} ranks): edge cut {:.2f}%, total {:.2f}s (read {:.2f}s, "
                 "assign {:.2f}s, shuffle {:.2f}s, write {:.2f}s), peak RSS per rank [{}] GB -> {}/{}.json\n",
                 options_.graph_name, parts_, options_.method, ranks_, 100 * ratio, total, layout_s, assign_s,
                 shuffle_s, write_s, rss_list, options_.out_dir, options_.graph_name);
      if (folded_nodes_ || sampled_out_)
        fmt::print("PT-Scotch saw a reduced graph: {} nodes with fewer than two neighbours were placed beside it, "
                   "and {} adjacency entries of nodes above {} neighbours were sampled out{}\n",
                   folded_nodes_, sampled_out_, kSampledDegree,
                   scotch_imbalance_ > kScotchDefaultImbalance
                       ? fmt::format("; each of its splits could be {:.1f}% off balance, which the nodes placed "
                                     "beside it even out",
                                     100 * scotch_imbalance_)
                       : std::string());
    }
  }
  return 0;
}

}  // namespace mpi_partition

int run_distributed_partition(const DistributedPartitionRequest& request) {
  MpiWorld world(nullptr, nullptr);
  int code = 0;
  try {
    mpi_partition::Partitioner partitioner(world, request);
    code = partitioner.run();
  } catch (const std::exception& e) {
    // Scopes are unwound (staging folders removed) before the other ranks are stopped.
    fmt::print(stderr, "tessera: error: partition rank {} of {} ({}): {}\n", world.rank(), world.size(), world.host(),
               e.what());
    std::fflush(stderr);
    world.abort(1);
  }
  return code;
}

}  // namespace tessera

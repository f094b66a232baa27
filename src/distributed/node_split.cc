#include "tessera/distributed/node_split.h"

#include <algorithm>

#include "distributed/id_chunks.h"
#include "tessera/distributed/dist_graph.h"
#include "tessera/base/error.h"

namespace tessera::distributed {
namespace {

// Masked IDs of [begin, end).
std::vector<int64_t> masked_ids(const DistTensor& mask, int64_t begin, int64_t end) {
  std::vector<int64_t> out;
  for_each_id_chunk(begin, end, [&](int64_t first, const std::vector<int64_t>& ids) {
    const Array m = mask.pull(ids);
    const auto* flags = static_cast<const uint8_t*>(m.raw());
    for (size_t i = 0; i < ids.size(); ++i)
      if (flags[i]) out.push_back(first + static_cast<int64_t>(i));
  });
  return out;
}

std::vector<int64_t> split(Context& ctx, const DistTensor& mask, bool force_even) {
  const DType t = mask.spec().dtype;
  if ((t != DType::kBool && t != DType::kUInt8) || mask.spec().row_elems() != 1)
    fail("node_split: {} is not a bool mask (dtype {}, {} values per row)", mask.name(), dtype_name(t),
         mask.spec().row_elems());
  const IdSpace& space = ctx.book().space(mask.spec().policy);
  const int rank = ctx.rank();
  const int world = ctx.world_size();
  // Shares by partition would leave out a partition without trainers, and
  // give nothing to trainers on client machines: split evenly instead.
  if (force_even || (!ctx.standalone() && !ctx.env().trainers_cover_partitions())) {
    const std::vector<int64_t> all = masked_ids(mask, 0, space.size());
    const auto [first, end] = even_range(static_cast<int64_t>(all.size()), rank, world);
    return std::vector<int64_t>(all.begin() + first, all.begin() + end);
  }
  // This machine's partition, split among its trainers.
  const int part = ctx.local_part();
  const std::vector<int64_t> mine = masked_ids(mask, space.starts[part], space.starts[part + 1]);
  const int k = ctx.standalone() ? 1 : ctx.env().num_trainers;
  const int t_id = ctx.standalone() ? 0 : ctx.env().trainer_id;
  const auto [first, end] = even_range(static_cast<int64_t>(mine.size()), t_id, k);
  return std::vector<int64_t>(mine.begin() + first, mine.begin() + end);
}

}  // namespace

std::pair<int64_t, int64_t> even_range(int64_t n, int rank, int world) {
  if (world < 1 || rank < 0 || rank >= world) fail("internal: rank {} of {} ranks", rank, world);
  const int64_t size = n / world, extra = n % world;
  const int64_t first = rank * size + std::min<int64_t>(rank, extra);
  return {first, first + size + (rank < extra ? 1 : 0)};
}

std::vector<int64_t> node_split(Context& ctx, const DistTensor& mask, bool force_even) {
  if (mask.spec().policy.rfind("node:", 0) != 0) fail("node_split: {} is not a node tensor", mask.name());
  return split(ctx, mask, force_even);
}

std::vector<int64_t> edge_split(Context& ctx, const DistTensor& mask, bool force_even) {
  if (mask.spec().policy.rfind("edge:", 0) != 0) fail("edge_split: {} is not an edge tensor", mask.name());
  return split(ctx, mask, force_even);
}

NodeSplits split_masks(Context& ctx, const DistGraph& graph, const std::string& ntype) {
  const std::string type = ntype.empty() ? graph.ntypes().at(0) : ntype;
  const auto& schema = ctx.config().node_feat_schema;
  auto share = [&](const char* mask) {
    const auto it = schema.find(type);
    if (it == schema.end() || !it->second.count(mask)) return std::vector<int64_t>{};
    return node_split(ctx, graph.ndata(mask, ntype), true);
  };
  return {share("train_mask"), share("val_mask"), share("test_mask")};
}

}  // namespace tessera::distributed

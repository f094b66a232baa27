// Setting up a node trainer's job from the shared flags (NodeTrainOptions), as the built-in trainers and a
// user's program do: the options checked, the job joined, the classes counted, the seeds shared out, the loader
// capped at the steps every trainer can run.
//
// Contract: count_classes, every_trainer_gets_seeds and equalize_steps are collective (every trainer calls them
// in the same order). Errors are tessera::Error naming the flag or the node data at fault.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_graph.h"
#include "tessera/distributed/dist_tensor.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/train/node_train_options.h"

namespace tessera::train {

// Checks the shared options' values before anything starts; errors name
// the flag. `fanouts` / `eval_fanouts` receive the per-layer fanouts.
void validate(const NodeTrainOptions& options, std::vector<int64_t>* fanouts, std::vector<int64_t>* eval_fanouts);

// distributed::initialize() with the options' standalone / part_config /
// ip_config / num_threads, then checks --graph-name against the graph.
std::unique_ptr<distributed::Context> join_job(const NodeTrainOptions& options);

// Prints, on the logging trainer, the warning of
// PartitionConfig::without_in_edges_warning when no edge reaches `category`.
void warn_if_unreachable(const distributed::Context& ctx, const std::string& category);

// The homogeneous graph's node data `name` as a model's input: float32
// vectors, else an error naming it, its dtype and its shape.
distributed::DistTensor input_features(const distributed::DistGraph& g, const std::string& name = "feat");

// 1 + the largest label of `label_name` (int64 node data) over all trainers.
int64_t count_classes(distributed::Context& ctx, const std::string& label_name);

// The training loader's options from the shared flags: --batch-size,
// --seed, and --num-samplers sampler threads (else the launcher's count).
sampling::LoaderOptions loader_options(const distributed::Context& ctx, const NodeTrainOptions& options);

// This trainer's seeds given its `share` of the training nodes: the share
// itself, unless some trainer has none (fewer training nodes than trainers,
// since shares are even): then every trainer takes all of them, so each has
// a batch and the averaged gradient is what one trainer would compute.
std::vector<int64_t> every_trainer_gets_seeds(distributed::Context& ctx, const std::vector<int64_t>& share);

// Caps `loader` at the steps every trainer can run per epoch (the minimum
// over trainers, so no all-reduce waits on one that ran out; and at
// --max-batches when >= 0) and returns that count; `total_seeds` gets the
// seeds of all trainers. Fails when a trainer has no batch.
int64_t equalize_steps(distributed::Context& ctx, sampling::DistDataLoader& loader, int64_t max_batches,
                       int64_t* total_seeds);

}  // namespace tessera::train

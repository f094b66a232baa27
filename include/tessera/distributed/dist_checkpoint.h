// Checkpoints of the tensors the servers hold (DistEmbedding rows and their sparse-optimizer state), written
// where the rows live: each machine's main server writes its partition's rows of the named tensors into
// <dir>/server-<machine>/<unit>-<N>/ (one .npy per tensor, published by a manifest with checksums, see
// tessera/io/checkpoints.h), all machines at once. `dir` is a path on the servers' machines; pass it absolute.
// In standalone mode this process holds every row and writes them as server-0.
//
// Each call is made by one trainer while no other trainer changes the tensors (between two barriers); it
// returns when every machine has answered. Errors are tessera::Error naming the machine and the file: a
// server that cannot write, a checkpoint that is missing or damaged, a tensor of another shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::distributed {

class Context;

// `unit` names what N counts: "epoch" or "step" (Checkpoints).

// Writes checkpoint `n` of `tensors` and keeps each machine's newest `keep`;
// returns the bytes all machines wrote.
uint64_t save_server_checkpoint(Context& ctx, const std::string& dir, int64_t n,
                                const std::vector<std::string>& tensors, int keep, const std::string& unit = "epoch");
// The N whose checkpoint every machine holds intact, newest first.
std::vector<int64_t> intact_server_checkpoints(Context& ctx, const std::string& dir, const std::string& unit = "epoch");
// Replaces the rows of `tensors` with checkpoint `n`'s.
void load_server_checkpoint(Context& ctx, const std::string& dir, int64_t n, const std::vector<std::string>& tensors,
                            const std::string& unit = "epoch");

}  // namespace tessera::distributed

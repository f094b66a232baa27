// Data-parallel gradient averaging, as DistributedDataParallel does it: after
// backward every trainer holds gradients of its own minibatch; averaging them
// keeps the replicas identical after each optimizer step.
//
// Private header: torch::nn::Module cannot usefully be forward-declared.
#pragma once

#include <torch/torch.h>

#include "tessera/dist/rendezvous.h"

namespace tessera::nn {

// Replaces every parameter gradient by its mean over coll's members. Call
// it on every member with the same model, in the same order of calls.
// Parameters without a gradient count as zeros and get one; parameters
// that do not require grad are skipped. With one member it does nothing.
void allreduce_gradients(torch::nn::Module& model, dist::Collectives& coll);

}  // namespace tessera::nn

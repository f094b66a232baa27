// Data-parallel gradient averaging, as DistributedDataParallel does it: after backward every trainer holds
// gradients of its own minibatch; averaging them keeps the replicas identical after each optimizer step.
//
// Collective: every trainer calls it after its backward, in the same order, with a model of the same
// parameters. It changes the gradients in place and keeps no reference to the model or the Collectives; it
// runs on the calling thread, which must own the Collectives. Errors are tessera::Error: gradients that are not
// float32 on the CPU, or a peer that fails or dies (reported by the Collectives within the job timeout).
#pragma once

#include <torch/nn/module.h>

#include "tessera/distributed/collectives.h"

namespace tessera::distributed {

// Replaces every parameter gradient by its mean over coll's members. Call
// it on every member with the same model, in the same order of calls.
// Parameters without a gradient count as zeros and get one; parameters
// that do not require grad are skipped. With one member it does nothing.
void allreduce_gradients(torch::nn::Module& model, Collectives& coll);

}  // namespace tessera::distributed

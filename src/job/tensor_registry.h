// The tensors each machine holds, published in the rendezvous store under
// "tensor/<machine>/<name>" so that backup servers and co-located trainers
// can map what the main server created in shared memory, and trainers on
// client machines can learn every tensor's spec (file-backed ones included).
#pragma once

#include <string>

#include "job/rendezvous.h"
#include "tessera/store/partition_store.h"

namespace tessera::job {

void publish_tensor(Rendezvous& store, int machine, const store::LocalTensor& tensor);
void unpublish_tensor(Rendezvous& store, int machine, const std::string& name);
// The tensor's spec as published by any machine (machine 0 first), or false.
bool find_published_spec(Rendezvous& store, int num_machines, const std::string& name, store::TensorSpec* spec);

// `name` in `partition`, mapping a published tensor on first use; nullptr if
// the machine holds no tensor of that name.
store::LocalTensor* resolve_tensor(store::PartitionStore& partition, Rendezvous* store, int machine,
                                   const std::string& name);

}  // namespace tessera::job

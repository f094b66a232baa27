// What Collectives (collectives.h) runs on: a way of moving numbers among a
// job's trainers. Two exist:
//   ring_collectives.cc  the default: a ring over the job's secured ZeroMQ
//                        transport (CURVE, the job's keys, its ZAP check),
//                        so gradients travel encrypted and a stranger who
//                        reaches a trainer's port is refused;
//   gloo_collectives.cc  c10d's ProcessGroupGloo, whose TCP pairs carry the
//                        bytes in the clear and accept any connection: kept
//                        for --insecure jobs and for comparison.
//
// Internal header. The contract is Collectives's: every member calls the
// same operations in the same order with the same sizes; a member that dies
// makes the others' calls fail (PeerError) within the job timeout.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tessera/base/array.h"

namespace tessera::job {
class Rendezvous;
}

namespace tessera::distributed {

class CollectiveBackend {
 public:
  virtual ~CollectiveBackend() = default;
  // Sums `count` values of `dtype` (float32, float64 or int64) at `data`
  // over every member, in place.
  virtual void all_reduce_sum(void* data, int64_t count, DType dtype) = 0;
  // Copies member `root`'s `bytes` at `data` to every member.
  virtual void broadcast(void* data, int64_t bytes, int root) = 0;
};

// Both meet their peers in `store` under `prefix`; `my_ip` is the address
// this member listens on (its machine's ip_config entry). size >= 2.
std::unique_ptr<CollectiveBackend> ring_collectives(job::Rendezvous& store, const std::string& prefix, int rank, int size,
                                                    const std::string& my_ip, int timeout_s);
std::unique_ptr<CollectiveBackend> gloo_collectives(job::Rendezvous& store, const std::string& prefix, int rank, int size,
                                                    const std::string& my_ip, int timeout_s);

}  // namespace tessera::distributed

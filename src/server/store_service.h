// The store service: rows of named, row-sharded tensors on the partition
// servers (DGL's KVServer). Request types and their frames; the handlers
// are in store_service.cc, the client side in distributed/kv_client.cc.
//
// Internal header.
#pragma once

#include "net/message.h"

namespace tessera::server {

// Header name: the tensor. Frames: row ids (int64) -> reply: the rows.
constexpr net::RequestType kPull = 2;
// Frames: row ids, rows; iarg = store::PushMode (assign or add).
constexpr net::RequestType kPush = 3;
// Frames: row ids, gradients (float32); iarg = store::SparseOptimizer,
// fargs = lr, eps, beta1, beta2.
constexpr net::RequestType kSparseStep = 4;
// Frames: the tensor's spec as JSON (store::TensorSpec). Main servers only.
constexpr net::RequestType kCreate = 5;
// Header name: the tensor.
constexpr net::RequestType kDelete = 6;

}  // namespace tessera::server

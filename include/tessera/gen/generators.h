// Synthetic datasets, deterministic by seed, for tests and benchmarks at real scale (`tessera gen`). Parallel
// parts draw from per-chunk random streams, so the same options give the same dataset whatever the thread
// count.
//
// Each generator returns a new Dataset the caller owns and keeps no state; they parallelise internally with
// OpenMP on the calling thread, and separate calls are independent. Errors are tessera::Error naming the flag
// or value: an unknown kind, negative sizes, 2^32 nodes or more, split fractions that do not fit, or a graph
// too dense to draw its distinct edges.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/graph/dataset.h"

namespace tessera {

struct GenOptions {
  std::string kind;       // products-like | mag-like | kg | rmat
  int64_t nodes = 0;      // 0 = the kind's default (full ogbn scale for products-like / mag-like)
  int64_t edges = 0;      // directed edges (triples for kg)
  int64_t feat_dim = 0;   // 0 = default (100 products-like / rmat, 128 mag-like)
  int64_t classes = 0;    // 0 = default (47 products-like / rmat, 349 mag-like)
  int64_t relations = 0;  // kg: 0 = default (50)
  double train_frac = 0.1, val_frac = 0.1, test_frac = 0.2;
  bool symmetric = false;  // rmat: store both directions of every edge
  uint64_t seed = 0;
};

// Dispatches on options.kind; errors on an unknown kind or bad sizes.
Dataset generate(const GenOptions& options);

Dataset generate_rmat(const GenOptions& options);
Dataset generate_products_like(const GenOptions& options);
Dataset generate_mag_like(const GenOptions& options);
Dataset generate_kg(const GenOptions& options);

}  // namespace tessera

// DGL-KE's chunked negative sampling, for KGE training (src/kge). A batch of positive triples, drawn
// without replacement from a shuffled pass over the trainer's triples, is cut
// into chunks of --neg_chunk_size; every positive of a chunk is scored
// against the same --neg_sample_size negative entities, so a chunk's negative
// scores are one matrix product. Batches alternate between corrupting heads
// and corrupting tails. With --neg_deg_sample a second, equal set of
// negatives per chunk is drawn in proportion to entity degree (the corrupted
// end of uniformly drawn training triples), as DGL-KE's option does.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/base/array.h"
#include "tessera/base/random.h"

namespace tessera::sampling {

struct TripleSamplerOptions {
  int64_t batch_size = 1024;
  int64_t neg_sample_size = 256;
  int64_t neg_chunk_size = -1;  // -1: neg_sample_size, as DGL-KE
  bool neg_deg_sample = false;
  int64_t num_entities = 0;
  // Positives only (1vsAll training, which scores every entity): no
  // negatives drawn, the negative sizes not used.
  bool positives_only = false;
};

// Throws naming the flag: sizes below 1, a batch that chunks do not divide.
void validate(const TripleSamplerOptions& options);
int64_t chunk_size(const TripleSamplerOptions& options);

struct TripleBatch {
  std::vector<int64_t> head, relation, tail;  // the positives
  std::vector<int64_t> negatives;             // [num_chunks, negatives_per_chunk] entity IDs
  int64_t num_chunks = 0, chunk_size = 0, negatives_per_chunk = 0;
  bool corrupt_head = false;
  int64_t size() const { return static_cast<int64_t>(head.size()); }
  // Every entity ID the batch uses, repeats kept: heads, tails, then
  // negatives (the order the steps' row positions follow).
  void entities(std::vector<int64_t>* out) const;
};

class TripleSampler {
 public:
  // `triples`: int64 [n, 3] (head, relation, tail), n >= 1, kept by reference
  // count. `stream` keeps the samplers of several workers apart.
  TripleSampler(Array triples, const TripleSamplerOptions& options, uint64_t seed, uint64_t stream);

  // The next batch; a pass that runs out reshuffles and continues, so every
  // batch is full. Corruption alternates from call to call, tails first.
  void next(TripleBatch* batch);
  int64_t epochs_started() const { return epochs_; }

 private:
  void reshuffle();

  Array triples_;
  TripleSamplerOptions options_;
  Rng rng_;
  std::vector<int64_t> order_;
  size_t cursor_ = 0;
  int64_t epochs_ = 0, calls_ = 0;
};

}  // namespace tessera::sampling

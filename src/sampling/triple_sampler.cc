#include "sampling/triple_sampler.h"

#include <numeric>

#include "tessera/base/error.h"

namespace tessera::sampling {
namespace {

// Row i of an int64 [n, 3] array: head, relation, tail.
const int64_t* triple(const Array& triples, int64_t i) { return triples.data<int64_t>() + 3 * i; }

}  // namespace

int64_t chunk_size(const TripleSamplerOptions& o) { return o.neg_chunk_size < 0 ? o.neg_sample_size : o.neg_chunk_size; }

void validate(const TripleSamplerOptions& o) {
  if (o.batch_size < 1) fail("--batch_size must be at least 1, got {}", o.batch_size);
  if (o.num_entities < 1) fail("the knowledge graph has no entities");
  if (o.positives_only) return;
  if (o.neg_sample_size < 1) fail("--neg_sample_size must be at least 1, got {}", o.neg_sample_size);
  const int64_t chunk = chunk_size(o);
  if (chunk < 1) fail("--neg_chunk_size must be at least 1 (or -1 for --neg_sample_size), got {}", o.neg_chunk_size);
  if (o.batch_size % chunk != 0)
    fail("--batch_size {} must be a multiple of the negative chunk size {} (--neg_chunk_size, default "
         "--neg_sample_size): every chunk of positives shares one set of negatives",
         o.batch_size, chunk);
}

void TripleBatch::entities(std::vector<int64_t>* out) const {
  out->clear();
  out->reserve(2 * head.size() + negatives.size());
  out->insert(out->end(), head.begin(), head.end());
  out->insert(out->end(), tail.begin(), tail.end());
  out->insert(out->end(), negatives.begin(), negatives.end());
}

TripleSampler::TripleSampler(Array triples, const TripleSamplerOptions& options, uint64_t seed, uint64_t stream)
    : triples_(std::move(triples)), options_(options), rng_(seed, stream) {
  validate(options_);
  if (triples_.rows() < 1) fail("a trainer has no training triples (more trainers than triples?)");
  order_.resize(triples_.rows());
  std::iota(order_.begin(), order_.end(), 0);
  reshuffle();
}

void TripleSampler::reshuffle() {
  for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng_.below(i)]);
  cursor_ = 0;
  ++epochs_;
}

void TripleSampler::next(TripleBatch* b) {
  const int64_t size = options_.batch_size;
  b->head.resize(size);
  b->relation.resize(size);
  b->tail.resize(size);
  for (int64_t i = 0; i < size; ++i) {
    if (cursor_ == order_.size()) reshuffle();
    const int64_t* t = triple(triples_, order_[cursor_++]);
    b->head[i] = t[0];
    b->relation[i] = t[1];
    b->tail[i] = t[2];
  }
  b->corrupt_head = (calls_++ % 2) == 1;
  if (options_.positives_only) {
    b->chunk_size = b->num_chunks = b->negatives_per_chunk = 0;
    b->negatives.clear();
    return;
  }
  b->chunk_size = chunk_size(options_);
  b->num_chunks = size / b->chunk_size;
  const int64_t uniform = options_.neg_sample_size;
  b->negatives_per_chunk = options_.neg_deg_sample ? 2 * uniform : uniform;
  b->negatives.resize(b->num_chunks * b->negatives_per_chunk);
  const auto n = static_cast<uint64_t>(triples_.rows());
  const int end = b->corrupt_head ? 0 : 2;
  for (int64_t c = 0; c < b->num_chunks; ++c) {
    int64_t* out = b->negatives.data() + c * b->negatives_per_chunk;
    for (int64_t k = 0; k < uniform; ++k) out[k] = static_cast<int64_t>(rng_.below(options_.num_entities));
    // Degree-proportional: the corrupted end of a uniformly drawn triple.
    for (int64_t k = uniform; k < b->negatives_per_chunk; ++k) out[k] = triple(triples_, rng_.below(n))[end];
  }
}

}  // namespace tessera::sampling

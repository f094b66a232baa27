// A loader's aggregation of the input layer (LoaderOptions::aggregate_inputs): blocks[0]'s reduction of its
// source rows, computed on the sampler thread right after it fetched them, while they are still in cache,
// instead of handing every source row to the trainer, whose first layer would read them all again from memory
// a few batches later. Compiled in the host-tuned kernel library.
#pragma once

#include <cstdint>

#include "tessera/nn/csr_reduce.h"
#include "tessera/sampling/block.h"

namespace tessera::sampling {

// rows: the block's num_src source rows of f floats. Writes the num_dst
// destinations' own rows into dst_rows when it is not null, and their
// `reduce` over in-edges into aggregated ([num_dst, f] each).
void aggregate_input_rows(const float* rows, const Block& block, nn::CsrReduce reduce, int64_t f, float* dst_rows,
                          float* aggregated);

}  // namespace tessera::sampling

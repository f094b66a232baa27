// A loader's aggregation of the input layer (LoaderOptions::aggregate_inputs): blocks[0]'s reduction of its
// source rows, computed on the sampler thread straight from where the rows lie (the partition's memory, the
// remote-row cache, or a buffer of the remote rows just pulled), each row read once, in source order, and added
// into the destinations it feeds. Copying every source row into the batch first and gathering them in edge
// order read and wrote ~3x the bytes; handing them all to the trainer, whose first layer read them again from
// memory a few batches later, cost more still. Compiled in the host-tuned kernel library.
#pragma once

#include <cstdint>

#include "tessera/nn/csr_reduce.h"
#include "tessera/sampling/block.h"

namespace tessera::sampling {

// rows[s]: where source s's f floats lie (distributed::locate_rows). Copies
// the rows of the block's first `copies` sources into `copied` ([copies, f];
// copies is 0, num_dst for the destinations' own rows, or num_src), and
// writes the destinations' `reduce` over in-edges into aggregated
// ([num_dst, f]), each row read once.
void aggregate_located_rows(const char* const* rows, const Block& block, nn::CsrReduce reduce, int64_t f,
                            float* copied, int64_t copies, float* aggregated);

}  // namespace tessera::sampling

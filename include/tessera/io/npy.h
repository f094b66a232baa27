// NumPy .npy files: read by mapping the file (zero-copy), write by streaming rows. Formats 1.0-3.0,
// little-endian, C order; dtypes int32, int64, float32, float64, uint8, bool.
//
// read_npy() returns an Array over a read-only shared mapping that lives as long as some Array sharing it; the
// file must not be rewritten in place meanwhile (write_npy and NpyWriter replace files by rename). An NpyWriter
// owns its temporary file: the file appears under its path only when finish() succeeds, and a writer destroyed
// before that removes the temporary. One NpyWriter belongs to one thread; the free functions keep no state and
// may be called from any thread. Errors are tessera::Error naming the file (and the array, for
// read_npy_checked): missing, not .npy, unsupported dtype or order, truncated, or a failed write or rename.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "tessera/base/array.h"

namespace tessera {

// Maps `path` read-only; data whose header leaves it misaligned for its dtype
// (never NumPy's own files) is copied into an aligned buffer instead. Throws
// tessera::Error naming the file on any problem (missing, not .npy,
// unsupported dtype, Fortran order, truncated data).
Array read_npy(const std::string& path);

// Reads and checks the dtype and number of dimensions; `what` names the array
// in the error message (e.g. "meta.json: node_types[0].label").
Array read_npy_checked(const std::string& path, DType dtype, size_t ndim, const std::string& what);

// Writes `array` to `path` atomically (temporary name, then rename).
void write_npy(const std::string& path, const Array& array);

// Streams rows into a .npy whose shape is known up front, for arrays built
// row by row (partition features gathered from a mapped source). The file
// appears under `path` only when finish() succeeds.
class NpyWriter {
 public:
  NpyWriter(std::string path, DType dtype, std::vector<int64_t> shape);
  ~NpyWriter();
  NpyWriter(const NpyWriter&) = delete;
  NpyWriter& operator=(const NpyWriter&) = delete;

  void append(const void* data, size_t bytes);
  void finish();

 private:
  std::string path_;
  std::string tmp_path_;
  FILE* file_ = nullptr;
  size_t expected_bytes_ = 0;
  size_t written_bytes_ = 0;
};

}  // namespace tessera

// The .npy reader (io/npy.cc): every dataset and partition array is a .npy
// file, and read_npy() maps it and trusts its header for the array's dtype and
// shape. The input is the whole file; an array that is accepted is then used
// the way its readers use it (numel, nbytes, its first and last byte), so a
// header that promises more data than the file holds shows up here.
#include "fuzz_util.h"
#include "tessera/io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  const std::string path = fuzz::input_file("a.npy", data, size);
  fuzz::expect_rejection_or_success([&] {
    const Array a = read_npy(path);
    if (a.numel() < 0) std::abort();  // a negative element count is never a valid array
    const size_t bytes = a.nbytes();
    if (bytes > size) std::abort();   // the data is inside the file
    if (bytes > 0) {
      const auto* p = static_cast<const volatile unsigned char*>(a.raw());
      (void)p[0];
      (void)p[bytes - 1];
    }
  });
  return 0;
}

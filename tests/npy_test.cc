#include <fstream>

#include "tessera/io/npy.h"
#include "tessera/base/error.h"
#include "test_util.h"

namespace tessera {
namespace {

using testing::TempDir;

template <typename T>
void round_trip(DType dtype, std::vector<int64_t> shape) {
  TempDir dir;
  Array a = Array::zeros(dtype, shape);
  T* p = a.data<T>();
  for (int64_t i = 0; i < a.numel(); ++i) p[i] = static_cast<T>(i % 7 == 3 ? 1 : (i * 3) % 5);
  write_npy(dir / "a.npy", a);
  Array b = read_npy(dir / "a.npy");
  EXPECT_EQ(b.dtype(), dtype);
  EXPECT_EQ(b.shape(), shape);
  ASSERT_EQ(b.nbytes(), a.nbytes());
  EXPECT_EQ(0, std::memcmp(a.raw(), b.raw(), a.nbytes()));
}

TEST(Npy, RoundTripsEveryDtype) {
  round_trip<int32_t>(DType::kInt32, {5, 3});
  round_trip<int64_t>(DType::kInt64, {2, 7});
  round_trip<float>(DType::kFloat32, {11});
  round_trip<double>(DType::kFloat64, {4, 2, 2});
  round_trip<uint8_t>(DType::kUInt8, {9});
  round_trip<bool>(DType::kBool, {6});
  round_trip<float>(DType::kFloat32, {0, 4});
}

// A format 1.0 .npy file with header `dict`, padded as numpy.save pads it
// (to 128 bytes), open for the data to follow.
std::ofstream open_version1_npy(const std::string& path, std::string dict) {
  dict.append(128 - 10 - dict.size() - 1, ' ');
  dict += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(dict.size()), 0};
  out.write(len, 2);
  out << dict;
  return out;
}

TEST(Npy, ReadsNumpyVersion1Header) {
  // What numpy.save writes for np.arange(3, dtype='<i8'): format 1.0, header padded to a multiple of 64 bytes.
  TempDir dir;
  std::ofstream out = open_version1_npy(dir / "v1.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }");
  for (int64_t v : {10, 20, 30}) out.write(reinterpret_cast<const char*>(&v), 8);
  out.close();
  Array a = read_npy(dir / "v1.npy");
  ASSERT_EQ(a.shape(), std::vector<int64_t>{3});
  EXPECT_EQ(a.data<int64_t>()[2], 30);
}

TEST(Npy, RejectsBadFilesWithTheirName) {
  TempDir dir;
  std::ofstream(dir / "junk.npy") << "this is not numpy";
  EXPECT_THROW(
      {
        try {
          read_npy(dir / "junk.npy");
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("junk.npy"), std::string::npos);
          EXPECT_NE(std::string(e.what()).find("bad magic"), std::string::npos);
          throw;
        }
      },
      Error);
  EXPECT_THROW(read_npy(dir / "missing.npy"), Error);

  Array a = Array::from_vector(std::vector<int64_t>{1, 2, 3, 4});
  write_npy(dir / "ok.npy", a);
  std::filesystem::resize_file(dir / "ok.npy", std::filesystem::file_size(dir / "ok.npy") - 8);
  try {
    read_npy(dir / "ok.npy");
    FAIL() << "truncated file accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  write_npy(dir / "f.npy", Array::zeros(DType::kFloat32, {3}));
  try {
    read_npy_checked(dir / "f.npy", DType::kInt64, 1, "labels");
    FAIL() << "wrong dtype accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must have dtype int64, found float32"), std::string::npos) << e.what();
  }
}

TEST(Npy, RejectsAShapeWhoseElementCountOverflows) {
  // Found by tests/fuzz/npy_fuzz.cc: 2^32 x 2^32 bytes wrapped to 0 bytes of
  // data, so the header-only file was accepted as an array whose numel()
  // overflows int64.
  TempDir dir;
  open_version1_npy(dir / "huge.npy", "{'descr': '|u1', 'fortran_order': False, 'shape': (4294967296, 4294967296), }")
      .close();
  try {
    read_npy(dir / "huge.npy");
    FAIL() << "a shape of 2^64 elements accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("huge.npy: shape '(4294967296, 4294967296)' in the .npy header has too many "
                                         "elements"),
              std::string::npos)
        << e.what();
  }
}

TEST(Npy, ReadsDataThatAnotherWriterLeftMisaligned) {
  // Found by scripts/fuzz (chunked target): a header not padded as NumPy pads
  // it left int32 edges at an odd offset of the mapping, and reading them was
  // undefined behaviour (UBSan: misaligned load). Such data is now copied.
  TempDir dir;
  // 60 bytes of header: the data starts at byte 70.
  const std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }\n";
  std::ofstream out(dir / "odd.npy", std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(dict.size()), 0};
  out.write(len, 2);
  out << dict;
  for (int32_t v : {7, -1, 40000, 3}) out.write(reinterpret_cast<const char*>(&v), 4);
  out.close();
  ASSERT_NE((10 + dict.size()) % 4, 0u);
  Array a = read_npy(dir / "odd.npy");
  ASSERT_EQ(a.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw()) % alignof(int32_t), 0u);
  EXPECT_EQ(a.data<int32_t>()[0], 7);
  EXPECT_EQ(a.data<int32_t>()[1], -1);
  EXPECT_EQ(a.data<int32_t>()[2], 40000);
  EXPECT_EQ(a.data<int32_t>()[3], 3);
}

TEST(Npy, WriterLeavesNothingWhenNotFinished) {
  TempDir dir;
  {
    NpyWriter w(dir / "partial.npy", DType::kInt64, {10});
    int64_t v = 1;
    w.append(&v, sizeof(v));
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "partial.npy"));
  EXPECT_EQ(testing::count_entries_with_prefix(dir.path(), "partial"), 0);
}

}  // namespace
}  // namespace tessera

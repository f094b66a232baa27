#include "tessera/io/npy.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "tessera/base/error.h"

namespace tessera {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

std::string descr_of(DType dtype) {
  switch (dtype) {
    case DType::kInt32: return "<i4";
    case DType::kInt64: return "<i8";
    case DType::kFloat32: return "<f4";
    case DType::kFloat64: return "<f8";
    case DType::kUInt8: return "|u1";
    case DType::kBool: return "|b1";
  }
  return "";
}

bool dtype_from_descr(std::string_view descr, DType* out) {
  // '=' means native order, which is little-endian on every platform we build for.
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '=' || descr[0] == '|')) {
    std::string_view code = descr.substr(1);
    if (code == "i4") { *out = DType::kInt32; return true; }
    if (code == "i8") { *out = DType::kInt64; return true; }
    if (code == "f4") { *out = DType::kFloat32; return true; }
    if (code == "f8") { *out = DType::kFloat64; return true; }
    if (code == "u1") { *out = DType::kUInt8; return true; }
    if (code == "b1") { *out = DType::kBool; return true; }
  }
  return false;
}

// Value of `key` in the header dict, as the raw text up to the next top-level
// comma or closing brace.
std::string_view dict_value(std::string_view header, std::string_view key, const std::string& path) {
  std::string quoted1 = "'" + std::string(key) + "'";
  std::string quoted2 = "\"" + std::string(key) + "\"";
  size_t pos = header.find(quoted1);
  size_t key_len = quoted1.size();
  if (pos == std::string_view::npos) pos = header.find(quoted2);
  if (pos == std::string_view::npos) fail("{}: .npy header has no '{}' entry", path, key);
  pos = header.find(':', pos + key_len);
  if (pos == std::string_view::npos) fail("{}: malformed .npy header near '{}'", path, key);
  ++pos;
  while (pos < header.size() && header[pos] == ' ') ++pos;
  size_t end = pos;
  int depth = 0;
  while (end < header.size()) {
    char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    ++end;
  }
  if (depth != 0 || end >= header.size()) fail("{}: malformed .npy header near '{}'", path, key);
  return header.substr(pos, end - pos + (header[end] == ')' ? 1 : 0));
}

std::vector<int64_t> parse_shape(std::string_view text, const std::string& path) {
  // "(2708, 1433)" or "(5,)" or "()"
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    fail("{}: malformed shape '{}' in .npy header", path, std::string(text));
  std::vector<int64_t> shape;
  size_t i = 1;
  while (i + 1 < text.size()) {
    while (i + 1 < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i + 1 >= text.size()) break;
    int64_t value = 0;
    size_t digits = 0;
    while (i + 1 < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (value > (int64_t{1} << 56)) fail("{}: dimension too large in shape '{}'", path, std::string(text));
      value = value * 10 + (text[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 0) fail("{}: malformed shape '{}' in .npy header", path, std::string(text));
    shape.push_back(value);
  }
  return shape;
}

// errno as its text and its name: "No space left on device (ENOSPC)".
std::string sys_error() { return fmt::format("{} ({})", std::strerror(errno), strerrorname_np(errno)); }

}  // namespace

Array read_npy(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open: {}", path, sys_error());
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    fail("{}: cannot stat: {}", path, sys_error());
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size < kMagicLen + 4) {
    ::close(fd);
    fail("{}: not a .npy file (only {} bytes)", path, size);
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) fail("{}: cannot map: {}", path, sys_error());
  std::shared_ptr<const void> owner(map, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });

  const auto* bytes = static_cast<const unsigned char*>(map);
  if (std::memcmp(bytes, kMagic, kMagicLen) != 0) fail("{}: not a .npy file (bad magic)", path);
  const int major = bytes[6];
  size_t header_len = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) fail("{}: truncated .npy header", path);
    header_len = static_cast<size_t>(bytes[8]) | (static_cast<size_t>(bytes[9]) << 8) |
                 (static_cast<size_t>(bytes[10]) << 16) | (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    fail("{}: unsupported .npy format version {}", path, major);
  }
  if (header_start + header_len > size) fail("{}: truncated .npy header", path);
  std::string_view header(reinterpret_cast<const char*>(bytes + header_start), header_len);

  std::string_view descr = dict_value(header, "descr", path);
  if (descr.size() >= 2 && (descr.front() == '\'' || descr.front() == '"')) descr = descr.substr(1, descr.size() - 2);
  DType dtype{};
  if (!dtype_from_descr(descr, &dtype))
    fail("{}: unsupported dtype '{}' (expected little-endian int32, int64, float32, float64, uint8 or bool)",
         path, std::string(descr));
  if (dict_value(header, "fortran_order", path) != "False")
    fail("{}: Fortran-order arrays are not supported (save with C order)", path);
  std::vector<int64_t> shape = parse_shape(dict_value(header, "shape", path), path);

  const size_t data_start = header_start + header_len;
  // Counted as Array::numel() counts, in int64: a shape whose element count
  // overflows it (and would wrap to a size the file seems to hold) is refused.
  int64_t elements = 1;
  int64_t data_bytes = 0;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(elements, d, &elements))
      fail("{}: shape '{}' in the .npy header has too many elements", path, std::string(dict_value(header, "shape", path)));
  if (__builtin_mul_overflow(elements, static_cast<int64_t>(dtype_size(dtype)), &data_bytes))
    fail("{}: shape '{}' in the .npy header has too many elements", path, std::string(dict_value(header, "shape", path)));
  const size_t expected = static_cast<size_t>(data_bytes);
  if (size - data_start < expected)
    fail("{}: truncated data: shape {} needs {} bytes, file has {}", path,
         Array::wrap(dtype, shape, nullptr, nullptr).shape_string(), expected, size - data_start);
  // NumPy pads the header so the data starts 64-byte aligned, but a file
  // from another writer may not: typed reads of a misaligned mapping are
  // undefined, so such data is copied into an aligned buffer instead.
  if (data_start % dtype_size(dtype) != 0) {
    Array copy = Array::uninitialized(dtype, std::move(shape));
    if (expected > 0) std::memcpy(copy.mutable_raw(), bytes + data_start, expected);
    return copy;
  }
  return Array::wrap(dtype, std::move(shape), bytes + data_start, std::move(owner));
}

Array read_npy_checked(const std::string& path, DType dtype, size_t ndim, const std::string& what) {
  Array a = read_npy(path);
  if (a.dtype() != dtype)
    fail("{}: {} must have dtype {}, found {}", path, what, dtype_name(dtype), dtype_name(a.dtype()));
  if (a.ndim() != ndim)
    fail("{}: {} must have {} dimension(s), found shape {}", path, what, ndim, a.shape_string());
  return a;
}

NpyWriter::NpyWriter(std::string path, DType dtype, std::vector<int64_t> shape)
    : path_(std::move(path)), tmp_path_(path_ + ".tmp." + std::to_string(::getpid())) {
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (!file_) fail("{}: cannot create: {}", tmp_path_, sys_error());
  std::string dict = "{'descr': '" + descr_of(dtype) + "', 'fortran_order': False, 'shape': " +
                     Array::wrap(dtype, shape, nullptr, nullptr).shape_string() + ", }";
  // Pad so that magic + version + length + header is a multiple of 64 bytes.
  size_t total = kMagicLen + 2 + 4 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict.push_back('\n');
  // Format 2.0 (4-byte header length): 3.0 only adds utf-8 headers, ours are ASCII.
  const uint32_t len = static_cast<uint32_t>(dict.size());
  const unsigned char prefix[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0,
                                  static_cast<unsigned char>(len & 0xff), static_cast<unsigned char>((len >> 8) & 0xff),
                                  static_cast<unsigned char>((len >> 16) & 0xff), static_cast<unsigned char>(len >> 24)};
  append(prefix, sizeof(prefix));
  append(dict.data(), dict.size());
  written_bytes_ = 0;
  expected_bytes_ = dtype_size(dtype);
  for (int64_t d : shape) expected_bytes_ *= static_cast<size_t>(d);
}

NpyWriter::~NpyWriter() {
  if (file_) {
    std::fclose(file_);
    std::remove(tmp_path_.c_str());
  }
}

void NpyWriter::append(const void* data, size_t bytes) {
  if (bytes == 0) return;
  if (std::fwrite(data, 1, bytes, file_) != bytes) fail("{}: write failed: {}", tmp_path_, sys_error());
  written_bytes_ += bytes;
}

void NpyWriter::finish() {
  if (written_bytes_ != expected_bytes_)
    fail("{}: internal error: wrote {} data bytes, header promises {}", path_, written_bytes_, expected_bytes_);
  FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0) {
    std::remove(tmp_path_.c_str());
    fail("{}: write failed: {}", tmp_path_, sys_error());
  }
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    std::remove(tmp_path_.c_str());
    fail("{}: cannot rename from {}: {}", path_, tmp_path_, sys_error());
  }
}

void write_npy(const std::string& path, const Array& array) {
  NpyWriter writer(path, array.dtype(), array.shape());
  writer.append(array.raw(), array.nbytes());
  writer.finish();
}

}  // namespace tessera

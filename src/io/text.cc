#include "io/text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <new>

#include "tessera/base/error.h"

namespace tessera {

LineReader::LineReader(std::string path) : path_(std::move(path)) {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open: {}", path_, std::strerror(errno));
  // Buffers sized to a regular file, within [16 KB, 1 MB]: large reads for
  // large files, while a small one (an ip_config, a fuzz input) costs no
  // fresh mappings. Any size reads correctly: a gzip file's chunks are
  // merely at most its compressed size.
  size_t bytes = size_t{1} << 20;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
    bytes = std::clamp<size_t>(static_cast<size_t>(st.st_size) + 1, size_t{16} << 10, bytes);
  buffer_.reset(new (std::nothrow) char[bytes]);
  gzFile f = buffer_ ? gzdopen(fd, "rb") : nullptr;  // reads plain files transparently too; owns fd from here
  if (!f) {
    ::close(fd);
    fail("{}: cannot open: out of memory", path_);
  }
  gz_ = f;
  buffer_bytes_ = bytes;
  gzbuffer(f, static_cast<unsigned>(std::min<size_t>(bytes, size_t{1} << 18)));
}

LineReader::~LineReader() {
  if (gz_) gzclose(static_cast<gzFile>(gz_));
}

bool LineReader::refill() {
  if (eof_) return false;
  int n = gzread(static_cast<gzFile>(gz_), buffer_.get(), static_cast<unsigned>(buffer_bytes_));
  if (n < 0) {
    int code = 0;
    const char* msg = gzerror(static_cast<gzFile>(gz_), &code);
    fail("{}: read error after line {}: {}", path_, line_number_, msg);
  }
  if (n == 0) {
    eof_ = true;
    return false;
  }
  begin_ = 0;
  end_ = static_cast<size_t>(n);
  return true;
}

bool LineReader::next(std::string_view* line) {
  carry_.clear();
  bool have_carry = false;
  while (true) {
    if (begin_ == end_ && !refill()) {
      if (!have_carry) return false;
      break;
    }
    const char* start = buffer_.get() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    if (nl) {
      size_t len = static_cast<const char*>(nl) - start;
      begin_ += len + 1;
      ++line_number_;
      if (!have_carry) {
        *line = std::string_view(start, len);
      } else {
        carry_.append(start, len);
        *line = carry_;
      }
      if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
      return true;
    }
    carry_.append(start, end_ - begin_);
    have_carry = true;
    begin_ = end_;
  }
  ++line_number_;  // last line without a trailing newline
  *line = carry_;
  if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
  return true;
}

std::string LineReader::where() const { return path_ + ":" + std::to_string(line_number_); }

void split_fields(std::string_view line, std::string_view separators, bool skip_empty,
                  std::vector<std::string_view>* fields) {
  fields->clear();
  size_t start = 0;
  while (start <= line.size()) {
    size_t end = line.find_first_of(separators, start);
    if (end == std::string_view::npos) end = line.size();
    if (!skip_empty || end > start) fields->push_back(line.substr(start, end - start));
    start = end + 1;
  }
}

int64_t parse_int(std::string_view field, const std::string& where, const char* what) {
  std::string_view t = trim(field);
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) {
    // Accept integral values written as floats ("3.0"), which pandas emits.
    double d = 0;
    auto [p2, e2] = std::from_chars(t.data(), t.data() + t.size(), d);
    // Range first: casting a double outside int64's range is undefined (found by scripts/fuzz: "3e50").
    const bool integral = !t.empty() && e2 == std::errc() && p2 == t.data() + t.size() && d >= -0x1p63 &&
                          d < 0x1p63 && d == std::trunc(d);
    if (integral) return static_cast<int64_t>(d);
    fail("{}: expected an integer {}, found '{}'", where, what, std::string(field));
  }
  return value;
}

float parse_float(std::string_view field, const std::string& where, const char* what) {
  std::string_view t = trim(field);
  float value = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size())
    fail("{}: expected a number {}, found '{}'", where, what, std::string(field));
  return value;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace tessera

// Line-oriented text input (plain or gzip, detected by zlib) with the file
// name and line number at hand for error messages, plus field parsers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

class LineReader {
 public:
  explicit LineReader(std::string path);  // throws if the file cannot be opened
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Next line without its line ending; false at end of file.
  bool next(std::string_view* line);
  int64_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }
  // "file:line" for messages about the current line.
  std::string where() const;

 private:
  bool refill();

  std::string path_;
  void* gz_ = nullptr;  // gzFile, kept opaque so zlib.h stays out of headers
  // Not zero-filled, and sized to the file: a reader of a small file (the
  // fuzz targets construct one per input) touches only a few pages.
  std::unique_ptr<char[]> buffer_;
  size_t buffer_bytes_ = 0;
  size_t begin_ = 0;
  size_t end_ = 0;
  bool eof_ = false;
  std::string carry_;
  int64_t line_number_ = 0;
};

// Splits on any of `separators`, skipping empty fields when `skip_empty`.
void split_fields(std::string_view line, std::string_view separators, bool skip_empty,
                  std::vector<std::string_view>* fields);

// Strict parsers: the whole field must be a number. On failure they throw an
// Error naming `where` (file:line) and the field.
int64_t parse_int(std::string_view field, const std::string& where, const char* what);
float parse_float(std::string_view field, const std::string& where, const char* what);

bool ends_with(std::string_view s, std::string_view suffix);
std::string_view trim(std::string_view s);

}  // namespace tessera

// Buffered gzip text output, for the OGB raw layout the generators can write.
#pragma once

#include <string>
#include <string_view>

namespace tessera {

class GzipWriter {
 public:
  explicit GzipWriter(std::string path);  // fast compression level
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  void write(std::string_view text);
  void close();

 private:
  void flush();

  std::string path_;
  void* gz_ = nullptr;
  std::string buffer_;
};

}  // namespace tessera

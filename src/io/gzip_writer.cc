#include "io/gzip_writer.h"

#include <zlib.h>

#include "tessera/base/error.h"

namespace tessera {

GzipWriter::GzipWriter(std::string path) : path_(std::move(path)) {
  gzFile f = gzopen(path_.c_str(), "wb1");
  if (!f) fail("{}: cannot create", path_);
  gz_ = f;
  buffer_.reserve(1 << 20);
}

GzipWriter::~GzipWriter() {
  if (gz_) gzclose(static_cast<gzFile>(gz_));
}

void GzipWriter::write(std::string_view text) {
  buffer_.append(text);
  if (buffer_.size() >= (1 << 20)) flush();
}

void GzipWriter::flush() {
  if (buffer_.empty()) return;
  if (gzwrite(static_cast<gzFile>(gz_), buffer_.data(), static_cast<unsigned>(buffer_.size())) <= 0)
    fail("{}: write failed", path_);
  buffer_.clear();
}

void GzipWriter::close() {
  flush();
  gzFile f = static_cast<gzFile>(gz_);
  gz_ = nullptr;
  if (gzclose(f) != Z_OK) fail("{}: write failed on close", path_);
}

}  // namespace tessera

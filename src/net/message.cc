#include "net/message.h"

#include <cstring>

#include <fmt/format.h>

namespace tessera::net {

Header make_header(RequestType type, uint64_t request_id, const std::string& name) {
  Header h;
  h.type = type;
  h.request_id = request_id;
  set_name(&h, name);
  return h;
}

void set_name(Header* header, const std::string& name) {
  if (name.size() >= kMaxNameBytes)
    throw std::invalid_argument(fmt::format("tensor name '{}' is longer than {} bytes", name, kMaxNameBytes - 1));
  std::memset(header->name, 0, kMaxNameBytes);
  std::memcpy(header->name, name.data(), name.size());
}

std::string header_name(const Header& header) {
  return std::string(header.name, strnlen(header.name, kMaxNameBytes));
}

void set_shape(Header* header, DType dtype, const std::vector<int64_t>& shape) {
  if (shape.size() > static_cast<size_t>(kMaxDims))
    throw std::invalid_argument(fmt::format("arrays on the wire have at most {} dimensions", kMaxDims));
  header->dtype = static_cast<uint8_t>(dtype);
  header->ndim = static_cast<uint8_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) header->shape[i] = shape[i];
}

std::vector<int64_t> header_shape(const Header& header) {
  return std::vector<int64_t>(header.shape, header.shape + header.ndim);
}

Header decode_header(const void* data, size_t bytes, size_t payload_frames) {
  if (bytes != sizeof(Header))
    throw ProtocolError(fmt::format("header frame has {} bytes, expected {}", bytes, sizeof(Header)));
  Header h;
  std::memcpy(&h, data, sizeof(Header));
  if (h.magic != kMagic) throw ProtocolError(fmt::format("bad magic 0x{:08x} (not a Tessera message)", h.magic));
  if (h.version != kVersion)
    throw ProtocolError(fmt::format("protocol version {} (this build speaks {})", h.version, kVersion));
  // Which types a server answers is its registry's business, not the wire's.
  if (h.type == 0) throw ProtocolError("message type 0 is not a request or a reply");
  if (strnlen(h.name, kMaxNameBytes) == kMaxNameBytes) throw ProtocolError("tensor name is not terminated");
  if (h.dtype > static_cast<uint8_t>(DType::kBool)) throw ProtocolError(fmt::format("unknown dtype {}", h.dtype));
  if (h.ndim > kMaxDims) throw ProtocolError(fmt::format("{} dimensions (at most {})", h.ndim, kMaxDims));
  for (int i = 0; i < h.ndim; ++i)
    if (h.shape[i] < 0 || h.shape[i] > (int64_t{1} << 40))
      throw ProtocolError(fmt::format("shape dimension {} is {}", i, h.shape[i]));
  if (h.num_frames != payload_frames || payload_frames > kMaxFrames)
    throw ProtocolError(fmt::format("header announces {} payload frames, message has {}", h.num_frames, payload_frames));
  return h;
}

void check_frame(size_t frame_bytes, DType dtype, int64_t rows, int64_t row_elems, const char* what) {
  const unsigned __int128 expected =
      static_cast<unsigned __int128>(rows) * static_cast<unsigned __int128>(row_elems) * dtype_size(dtype);
  if (rows < 0 || row_elems < 0 || expected != frame_bytes)
    throw ProtocolError(fmt::format("{} frame has {} bytes, expected {} rows x {} {} values", what, frame_bytes,
                                    rows, row_elems, dtype_name(dtype)));
}

}  // namespace tessera::net

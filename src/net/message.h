// The wire format: every request and reply is one ZeroMQ multipart message,
// a fixed 256-byte header frame followed by `num_frames` raw payload frames
// (ids, rows, a JSON spec, or an error text). The header is plain
// little-endian data, so encoding is a memcpy and decoding a bounds check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/base/array.h"

namespace tessera::net {

constexpr uint32_t kMagic = 0x41525354;  // "TSRA"
constexpr uint16_t kVersion = 1;
constexpr size_t kMaxNameBytes = 128;
constexpr int kMaxDims = 4;
constexpr size_t kMaxFrames = 8;

// What a request asks for. The transport knows no request but the reply:
// the parts above it declare their types next to their handlers and register
// them with a server (net/service_registry.h), which refuses a type
// claimed twice.
using RequestType = uint16_t;
constexpr RequestType kReply = 1;  // status 0: success; otherwise frame 0 is the error text


#pragma pack(push, 1)
struct Header {
  uint32_t magic = kMagic;
  uint16_t version = kVersion;
  uint16_t type = 0;
  uint64_t request_id = 0;
  int32_t status = 0;
  uint8_t dtype = 0;  // DType of the payload rows
  uint8_t ndim = 0;
  uint16_t num_frames = 0;
  int64_t shape[kMaxDims] = {0, 0, 0, 0};
  int64_t iarg = 0;
  double fargs[4] = {0, 0, 0, 0};
  char name[kMaxNameBytes] = {};
  uint8_t reserved[256 - 4 - 2 - 2 - 8 - 4 - 1 - 1 - 2 - 8 * kMaxDims - 8 - 32 - kMaxNameBytes] = {};
};
#pragma pack(pop)
static_assert(sizeof(Header) == 256, "the header is a fixed 256 bytes on the wire");

// Decode failures: the server answers them with an error reply.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

Header make_header(RequestType type, uint64_t request_id, const std::string& name);
void set_name(Header* header, const std::string& name);
std::string header_name(const Header& header);
void set_shape(Header* header, DType dtype, const std::vector<int64_t>& shape);
std::vector<int64_t> header_shape(const Header& header);

// Checks magic, version, a non-zero type, the name's terminator, dtype, ndim and shape
// bounds, and that the frame count matches; throws ProtocolError.
Header decode_header(const void* data, size_t bytes, size_t payload_frames);

// Views payload frame bytes as an array of `dtype` with `count` rows of
// `row_elems` elements, checking the size exactly; throws ProtocolError.
void check_frame(size_t frame_bytes, DType dtype, int64_t rows, int64_t row_elems, const char* what);

}  // namespace tessera::net

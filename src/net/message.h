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

enum class MessageType : uint16_t {
  kReply = 1,        // status 0: success; otherwise frame 0 is the error text
  kPull = 2,         // frames: row ids (int64) -> reply: rows
  kPush = 3,         // frames: row ids, rows; iarg = PushMode
  kSparseStep = 4,   // frames: row ids, gradients; iarg = optimizer, fargs = lr, eps, beta1, beta2
  kCreate = 5,       // frames: JSON tensor spec
  kDelete = 6,       // name
  kInDegrees = 7,    // frames: local node offsets -> reply: degrees (int64)
  kFindEdges = 8,    // frames: edge ids -> reply: source ids, destination ids (int64)
  kShutdown = 9,
  kSample = 10,      // frames: seeds, fanout spec (int64) -> reply: counts, sources, edge IDs
  // The rendezvous store (machine 0's main server, at the master port):
  kStoreSet = 11,     // frames: key, value
  kStoreGet = 12,     // frames: key -> reply: iarg 1 and the value, or iarg 0 (no such key yet)
  kStoreAdd = 13,     // frames: key; iarg = delta -> reply: iarg = the new count
  kStoreCheck = 14,   // frames: key -> reply: iarg 1 if it is set
  kStoreDelete = 15,  // frames: key -> reply: iarg 1 if it was set
  kStoreCount = 16,   // -> reply: iarg = number of keys
  kTopInDegree = 17,  // iarg = count -> reply: local offsets (int64) of the `count` nodes of largest in-degree
  // Checkpoints of the machine's rows (main servers; frame 0 is JSON with "dir"):
  kSaveCheckpoint = 18,   // iarg = epoch; JSON "keep", "tensors" -> reply: iarg = bytes written
  kLoadCheckpoint = 19,   // iarg = epoch; JSON "tensors"
  kListCheckpoints = 20,  // -> reply: the intact epochs (int64), newest first
};
constexpr MessageType kLastMessageType = MessageType::kListCheckpoints;


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

Header make_header(MessageType type, uint64_t request_id, const std::string& name);
void set_name(Header* header, const std::string& name);
std::string header_name(const Header& header);
void set_shape(Header* header, DType dtype, const std::vector<int64_t>& shape);
std::vector<int64_t> header_shape(const Header& header);

// Checks magic, version, type, the name's terminator, dtype, ndim and shape
// bounds, and that the frame count matches; throws ProtocolError.
Header decode_header(const void* data, size_t bytes, size_t payload_frames);

// Views payload frame bytes as an array of `dtype` with `count` rows of
// `row_elems` elements, checking the size exactly; throws ProtocolError.
void check_frame(size_t frame_bytes, DType dtype, int64_t rows, int64_t row_elems, const char* what);

}  // namespace tessera::net

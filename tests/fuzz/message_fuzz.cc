// The RPC wire format (net/message.h) as a server and a client decode it: a
// ZeroMQ message from any peer that can reach the port is a 256-byte header
// frame and payload frames, checked by decode_header() (ServerSocket::receive,
// Client::poll_once) and check_frame() (the servers' id and row frames), and a
// kCreate request's JSON tensor spec (TensorSpec::from_json). ZeroMQ itself
// stays out: the input is cut into frames the way recv_multipart hands them.
//
// Input: byte 0 = number of payload frames (mod 10, so more than kMaxFrames
// occur), a 2-byte little-endian header frame length, the header frame, then
// per payload frame a 4-byte little-endian length and its bytes (lengths are
// cut to what is left).
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "net/message.h"
#include "server/store_service.h"
#include "tessera/store/tensor.h"

namespace {

using namespace tessera;

struct Reader {
  const uint8_t* data;
  size_t size;
  size_t take_length(int bytes) {
    size_t n = 0;
    for (int i = 0; i < bytes && size > 0; ++i, ++data, --size) n |= static_cast<size_t>(*data) << (8 * i);
    return n;
  }
  std::string take(size_t n) {
    n = std::min(n, size);
    std::string out(reinterpret_cast<const char*>(data), n);
    data += n;
    size -= n;
    return out;
  }
};

// What the store service does with the frames before they touch a
// partition (net/service_registry.cc ids_frame, server/store_service.cc).
void check_payload(const net::Header& h, const std::vector<std::string>& frames) {
  const net::RequestType type = h.type;
  const std::string name = net::header_name(h);
  const std::vector<int64_t> shape = net::header_shape(h);
  if (type == server::kCreate && !frames.empty()) {
    const store::TensorSpec spec = store::TensorSpec::from_json(frames[0]);
    (void)spec.row_elems();
    return;
  }
  if (type == net::kReply || frames.empty()) return;
  const int64_t count = h.ndim >= 1 ? h.shape[0] : 0;
  net::check_frame(frames[0].size(), DType::kInt64, count, 1, "ids");
  if (frames.size() >= 2) {
    const int64_t row_elems = h.ndim >= 2 ? h.shape[1] : 1;
    net::check_frame(frames[1].size(), static_cast<DType>(h.dtype), count, row_elems, "values");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in{data, size};
  const size_t num_payload = in.take_length(1) % 10;
  const std::string header = in.take(in.take_length(2));
  std::vector<std::string> frames;
  for (size_t i = 0; i < num_payload; ++i) frames.push_back(in.take(in.take_length(4)));
  fuzz::expect_rejection_or_success([&] {
    try {
      const net::Header h = net::decode_header(header.data(), header.size(), frames.size());
      check_payload(h, frames);
    } catch (const net::ProtocolError&) {
      // The server answers these with an error reply.
    }
  });
  return 0;
}

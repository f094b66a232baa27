#include "distributed/services.h"

#include <cstdio>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

namespace tessera::distributed {
namespace {

std::map<int32_t, RequestHandler>& services() {
  static std::map<int32_t, RequestHandler> table;  // built before main(), read-only after
  return table;
}

}  // namespace

bool register_service(net::MessageType type, RequestHandler handler) {
  const auto key = static_cast<int32_t>(type);
  if (!services().emplace(key, std::move(handler)).second) {
    fmt::print(stderr, "tessera: two handlers registered for message type {}\n", key);
    std::abort();
  }
  return true;
}

const RequestHandler* find_service(net::MessageType type) {
  const auto it = services().find(static_cast<int32_t>(type));
  return it == services().end() ? nullptr : &it->second;
}

const int64_t* ids_frame(net::Request& request, size_t frame, int64_t* count) {
  if (request.frames.size() <= frame) throw net::ProtocolError(fmt::format("missing payload frame {}", frame));
  *count = request.header.ndim >= 1 ? request.header.shape[0] : 0;
  net::check_frame(request.frames[frame].size(), DType::kInt64, *count, 1, "ids");
  return request.frames[frame].data<int64_t>();
}

}  // namespace tessera::distributed

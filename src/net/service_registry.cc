#include "net/service_registry.h"

#include "tessera/base/error.h"

namespace tessera::net {

bool RequestTypes::claim(net::RequestType type, const std::string& service) {
  if (type == net::kReply) {
    conflicts_.push_back(fmt::format("{} claims type {}, the transport's reply", service, type));
    return false;
  }
  const auto [it, fresh] = owners_.emplace(type, service);
  if (!fresh) conflicts_.push_back(fmt::format("type {} is claimed by {} and by {}", type, it->second, service));
  return fresh;
}

void RequestTypes::check() const {
  if (!conflicts_.empty()) fail("request types claimed twice: {}", fmt::join(conflicts_, "; "));
}

RequestTypes& request_types() {
  static RequestTypes types;  // built before main(), read-only after
  return types;
}

const int64_t* ids_frame(net::Request& request, size_t frame, int64_t* count) {
  if (request.frames.size() <= frame) throw net::ProtocolError(fmt::format("missing payload frame {}", frame));
  *count = request.header.ndim >= 1 ? request.header.shape[0] : 0;
  net::check_frame(request.frames[frame].size(), DType::kInt64, *count, 1, "ids");
  return request.frames[frame].data<int64_t>();
}

}  // namespace tessera::net

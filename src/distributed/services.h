// The requests a partition server answers, registered by the part of the
// library that owns each one (as ps-lite's KVServer::set_request_handle and
// DGL's register_service): the server itself knows only the transport and
// its partition, so the parts above it (sampling) add their services
// without the server depending on them.
//
// Internal header. Registration happens during static initialisation of
// libtessera (a registrar in the owning part's .cc file); lookups happen
// only after main() starts, so the table needs no lock.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "net/transport.h"
#include "tessera/distributed/job_env.h"
#include "tessera/partition/partition_book.h"
#include "tessera/store/partition_store.h"

namespace tessera::distributed {

// What a handler may use of the server that received the request.
struct ServedPartition {
  const JobEnv& env;
  const PartitionConfig& config;
  const PartitionBook& book;
  store::PartitionStore& partition;
  // A tensor of this partition by name (published ones mapped on first use);
  // throws tessera::Error naming the tensor when there is none.
  std::function<store::LocalTensor&(const std::string&)> tensor;
};

// Answers one request: fills `reply`'s shape fields and returns the reply's
// payload frames. Throwing (tessera::Error, net::ProtocolError) sends the
// message back as an error reply; the server keeps serving.
using RequestHandler =
    std::function<std::vector<zmq::message_t>(ServedPartition& server, net::Request& request, net::Header* reply)>;

// Registers the handler of `type`; a second handler for one type is a
// programming error and aborts with a message. Returns true, so that a
// registrar can be a namespace-scope constant.
bool register_service(net::MessageType type, RequestHandler handler);
// The handler of `type`, or null.
const RequestHandler* find_service(net::MessageType type);

// Frame `frame` of `request` as int64 IDs whose count is header.shape[0];
// a missing or mis-sized frame throws net::ProtocolError.
const int64_t* ids_frame(net::Request& request, size_t frame, int64_t* count);

}  // namespace tessera::distributed

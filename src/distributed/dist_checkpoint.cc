#include "tessera/distributed/dist_checkpoint.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "server/server_state.h"
#include "tessera/base/error.h"
#include "tessera/distributed/context.h"
#include "tessera/io/checkpoints.h"
#include "tessera/io/npy.h"
#include "tessera/store/partition_store.h"

namespace tessera::distributed {
namespace {

// Checkpoints of the machine's rows, answered by main servers; frame 0 is
// JSON with "dir" and "unit".
constexpr net::RequestType kSaveCheckpoint = 18;   // iarg = number; JSON "keep", "tensors" -> reply: iarg = bytes
constexpr net::RequestType kLoadCheckpoint = 19;   // iarg = number; JSON "tensors"
constexpr net::RequestType kListCheckpoints = 20;  // -> reply: the intact numbers (int64), newest first
using nlohmann::json;
using TensorByName = std::function<store::LocalTensor&(const std::string&)>;

Checkpoints machine_checkpoints(const std::string& dir, const std::string& unit, int machine, int keep = 1) {
  if (unit != "epoch" && unit != "step") fail("checkpoints count epochs or steps, not '{}'", unit);
  return Checkpoints(dir, fmt::format("server-{}", machine), keep, unit);
}

// Tensors a checkpoint may hold: those trainers created, whose names are
// file names; the partition's own arrays ("node/paper/feat") never change.
void check_names(const std::vector<std::string>& names) {
  for (const std::string& name : names)
    if (name.empty() || name.find('/') != std::string::npos || name[0] == '.')
      fail("tensor '{}' cannot be checkpointed: only tensors created by trainers can", name);
}

// What a request carries: {"dir", "unit"} and for a save or load "tensors",
// for a save "keep".
json request_body(net::Request& request) {
  if (request.frames.size() != 1) throw net::ProtocolError("a checkpoint request needs one JSON frame");
  try {
    return json::parse(request.frames[0].to_string());
  } catch (const json::exception& e) {
    throw net::ProtocolError(std::string("a checkpoint request's JSON is malformed: ") + e.what());
  }
}

std::vector<std::string> names_of(const json& request) {
  std::vector<std::string> names = request.at("tensors").get<std::vector<std::string>>();
  check_names(names);
  return names;
}

// The machine's rows of each tensor as <name>.npy.
uint64_t save_rows(const TensorByName& tensor, int machine, const json& request, int64_t n) {
  const std::vector<std::string> names = names_of(request);
  const Checkpoints checkpoints = machine_checkpoints(request.at("dir"), request.at("unit"), machine, request.at("keep"));
  return checkpoints.save(n, [&](const std::string& staged) {
    for (const std::string& name : names) write_npy(staged + "/" + name + ".npy", tensor(name).rows);
  });
}

void load_rows(const TensorByName& tensor, int machine, const json& request, int64_t n) {
  const std::vector<std::string> names = names_of(request);
  const std::string path = machine_checkpoints(request.at("dir"), request.at("unit"), machine).path(n);
  const std::string why = checkpoint_damage(path);
  if (!why.empty()) fail("machine {}: checkpoint {} cannot be loaded: {}", machine, path, why);
  for (const std::string& name : names) {
    store::LocalTensor& t = tensor(name);
    const std::string file = path + "/" + name + ".npy";
    const Array rows = read_npy(file);
    if (rows.dtype() != t.rows.dtype() || rows.shape() != t.rows.shape())
      fail("{}: expected {} {} rows of tensor '{}', found {} {}", file, t.rows.shape_string(),
           dtype_name(t.rows.dtype()), name, rows.shape_string(), dtype_name(rows.dtype()));
    std::memcpy(t.rows.mutable_raw(), rows.raw(), rows.nbytes());
  }
}


TensorByName tensors_of(server::ServerState& state) {
  return [&state](const std::string& name) -> store::LocalTensor& { return state.tensor(name); };
}

net::Frames serve_save(server::ServerState& state, net::Request& request, net::Header* reply) {
  reply->iarg = static_cast<int64_t>(save_rows(tensors_of(state), state.env.machine_id, request_body(request),
                                               request.header.iarg));
  return {};
}

net::Frames serve_load(server::ServerState& state, net::Request& request, net::Header*) {
  load_rows(tensors_of(state), state.env.machine_id, request_body(request), request.header.iarg);
  return {};
}

net::Frames serve_list(server::ServerState& state, net::Request& request, net::Header* reply) {
  const json body = request_body(request);
  std::vector<int64_t> epochs = machine_checkpoints(body.at("dir"), body.at("unit"), state.env.machine_id).intact();
  net::set_shape(reply, DType::kInt64, {static_cast<int64_t>(epochs.size())});
  std::vector<zmq::message_t> frames;
  frames.push_back(net::frame_of(std::move(epochs)));
  return frames;
}

[[maybe_unused]] const bool kCheckpointServices =
    server::partition_services().add(kSaveCheckpoint, "checkpoints: save", serve_save) &&
    server::partition_services().add(kLoadCheckpoint, "checkpoints: load", serve_load) &&
    server::partition_services().add(kListCheckpoints, "checkpoints: list", serve_list);

// The standalone process's own tensors.
TensorByName local_tensors(Context& ctx) {
  return [&ctx](const std::string& name) -> store::LocalTensor& {
    store::LocalTensor* t = ctx.local().find(name);
    if (t == nullptr) fail("there is no tensor named '{}'", name);
    return *t;
  };
}

// Sends `type` with `body` to every machine's main server at once; their replies.
std::vector<net::Reply> ask_every_machine(Context& ctx, net::RequestType type, int64_t epoch, const json& body) {
  std::vector<uint64_t> requests;
  for (int m = 0; m < ctx.num_parts(); ++m) {
    net::Header h = net::make_header(type, 0, "");
    h.iarg = epoch;
    std::vector<zmq::message_t> frames;
    frames.push_back(net::frame_of(body.dump()));
    requests.push_back(ctx.client().send(m * ctx.env().num_servers, h, std::move(frames)));
  }
  return ctx.client().wait(requests);
}

}  // namespace

uint64_t save_server_checkpoint(Context& ctx, const std::string& dir, int64_t n,
                                const std::vector<std::string>& tensors, int keep, const std::string& unit) {
  const json request = {{"dir", dir}, {"unit", unit}, {"keep", keep}, {"tensors", tensors}};
  if (ctx.standalone()) return save_rows(local_tensors(ctx), 0, request, n);
  uint64_t bytes = 0;
  for (const net::Reply& reply : ask_every_machine(ctx, kSaveCheckpoint, n, request))
    bytes += static_cast<uint64_t>(reply.header.iarg);
  return bytes;
}

std::vector<int64_t> intact_server_checkpoints(Context& ctx, const std::string& dir, const std::string& unit) {
  if (ctx.standalone()) return machine_checkpoints(dir, unit, 0).intact();
  std::vector<int64_t> common;
  bool first = true;
  for (const net::Reply& reply :
       ask_every_machine(ctx, kListCheckpoints, 0, {{"dir", dir}, {"unit", unit}})) {
    if (reply.frames.size() != 1 || reply.frames[0].size() % sizeof(int64_t) != 0)
      fail("listing the checkpoints in {}: a server's reply has the wrong size", dir);
    const int64_t* e = reply.frames[0].data<int64_t>();
    const std::vector<int64_t> mine(e, e + reply.frames[0].size() / sizeof(int64_t));
    common = first ? mine : held_by_both(common, mine);  // each list is newest first
    first = false;
  }
  return common;
}

void load_server_checkpoint(Context& ctx, const std::string& dir, int64_t n, const std::vector<std::string>& tensors,
                            const std::string& unit) {
  const json request = {{"dir", dir}, {"unit", unit}, {"tensors", tensors}};
  if (ctx.standalone()) return load_rows(local_tensors(ctx), 0, request, n);
  ask_every_machine(ctx, kLoadCheckpoint, n, request);
}

}  // namespace tessera::distributed

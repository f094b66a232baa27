// The partition servers' request handlers (every service registered with
// server::partition_services(): the store's pull, push and sparse step, the
// graph queries of DGL's DistGraph and the link-prediction loaders
// (in-degrees and out-degrees per edge type, find-edges, has-edges with its
// optional types frame, top in-degree) and sampling) as a server runs them on
// a message from any authenticated peer: decode_header() first, exactly as
// ServerSocket::receive, then the registry's dispatch against a real
// partition. The rendezvous store's requests go through its own registry.
// A handler must answer every input or throw; a sanitizer report, an abort
// or a hang is a crash.
//
// Two partitions are written once, at start, by partition_dataset(): a
// homogeneous graph with node features, labels and edge weights "w", and a
// typed one (two node types, three relations, weights "w" on each). Both serve, beside their
// files' arrays, a writable "emb" with every sparse optimizer's state.
//
// Input: byte 0 picks the partition (bit 0), the registry (bit 1: the
// rendezvous store's) and the number of payload frames (bits 2-5, mod 9);
// bytes 1-256 are the header frame as sent, whose `type` is mapped onto the
// served types (type mod their count), so mutations stay on handlers; then
// per payload frame a 4-byte little-endian length and its bytes (lengths are
// cut to what is left). Kept out: create, delete and the checkpoints (they
// publish to the rendezvous and write files; their JSON is message_fuzz's).
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_util.h"
#include "job/rendezvous_store.h"
#include "net/transport.h"
#include "sampling/sample_service.h"
#include "server/graph_service.h"
#include "server/server_state.h"
#include "server/store_service.h"
#include "tessera/partition/partition.h"
#include "tessera/store/tensor.h"

namespace {

using namespace tessera;

constexpr net::RequestType kPartitionTypes[] = {server::kPull,      server::kPush,       server::kSparseStep,
                                                server::kInDegrees, server::kFindEdges,  server::kTopInDegree,
                                                server::kOutDegrees, server::kHasEdges, sampling::kSample};
constexpr net::RequestType kStoreTypes[] = {job::kStoreSet,   job::kStoreGet,
                                            job::kStoreAdd,   job::kStoreCheck,
                                            job::kStoreDelete, job::kStoreCount};

Array int64s(std::vector<int64_t> values) {
  Array a = Array::zeros(DType::kInt64, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), a.data<int64_t>());
  return a;
}

// `count` random edges between `src` and `dst` nodes (duplicates and self
// loops included: the handlers see them in real graphs too).
EdgeType random_edges(const std::string& s, const std::string& r, const std::string& d, int64_t src, int64_t dst,
                      int64_t count, std::mt19937_64& rng) {
  std::vector<int64_t> u(count), v(count);
  for (int64_t i = 0; i < count; ++i) {
    u[i] = static_cast<int64_t>(rng() % src);
    v[i] = static_cast<int64_t>(rng() % dst);
  }
  EdgeType e{s, r, d, int64s(u), int64s(v), {}};
  return e;
}

NodeType nodes(const std::string& name, int64_t count) {
  NodeType t;
  t.name = name;
  t.count = count;
  Array feat = Array::zeros(DType::kFloat32, {count, 3});
  for (int64_t i = 0; i < feat.numel(); ++i) feat.data<float>()[i] = static_cast<float>(i);
  std::vector<int64_t> labels(count), train;
  for (int64_t i = 0; i < count; ++i) {
    labels[i] = i % 3;
    if (i % 4 == 0) train.push_back(i);
  }
  t.data["feat"] = feat;
  t.data["label"] = int64s(labels);
  t.train = int64s(train);
  return t;
}

struct Relation {
  std::string src, name, dst;
  int64_t edges;
};

// Node types (name, count) and relations with random edges drawn by `seed`.
Dataset graph(const std::string& name, const std::vector<std::pair<std::string, int64_t>>& types,
              const std::vector<Relation>& relations, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Dataset d;
  d.name = name;
  for (const auto& [type, count] : types) d.node_types.push_back(nodes(type, count));
  for (const Relation& r : relations)
    d.edge_types.push_back(random_edges(r.src, r.name, r.dst, d.node_type(r.src).count, d.node_type(r.dst).count,
                                        r.edges, rng));
  return d;
}

// One node and edge type, with edge weights "w" for weighted sampling.
Dataset homogeneous_graph() {
  Dataset d = graph("homo", {{"_N", 40}}, {{"_N", "_E", "_N", 240}}, 1);
  Array w = Array::zeros(DType::kFloat32, {240});
  for (int64_t i = 0; i < 240; ++i) w.data<float>()[i] = static_cast<float>(i % 3);
  d.edge_types[0].data["w"] = w;
  return d;
}

// Two node types and three relations, each with edge weights "w".
Dataset typed_graph() {
  Dataset d = graph("typed", {{"paper", 30}, {"author", 12}},
                    {{"author", "writes", "paper", 60}, {"paper", "written-by", "author", 60},
                     {"paper", "cites", "paper", 90}},
                    2);
  for (EdgeType& e : d.edge_types) {
    Array w = Array::zeros(DType::kFloat32, {e.count()});
    for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = static_cast<float>(i % 4);
    e.data["w"] = w;
  }
  return d;
}

// A server of partition 0 of `dataset`, written under `dir`: its state as
// open_partition leaves it, without the socket and the rendezvous.
struct Server {
  std::unique_ptr<server::ServerState> state;
  std::vector<uint32_t> locks = std::vector<uint32_t>(store::RowLocks::kStripes);
};

std::unique_ptr<Server> start_server(const Dataset& dataset, const std::string& dir) {
  PartitionOptions options;
  options.graph_name = dataset.name;
  options.num_parts = 2;
  options.method = "random";
  options.seed = 3;
  options.out_dir = dir + "/" + dataset.name;
  partition_dataset(dataset, options);
  job::JobEnv env;
  env.role = job::Role::kServer;
  env.num_machines = 2;
  env.part_config = options.out_dir + "/" + dataset.name + ".json";
  auto s = std::make_unique<Server>();
  s->state = std::make_unique<server::ServerState>(env);
  server::ServerState& state = *s->state;
  state.partition = std::make_unique<store::PartitionStore>(state.config, state.book, 0);
  state.locks = store::RowLocks(s->locks.data());
  const std::string policy = "node:" + dataset.node_types[0].name;
  const IdSpace& space = state.book.space(policy);
  const int64_t rows = space.starts[1] - space.starts[0];
  const auto add = [&](const std::string& name, std::vector<int64_t> row_shape, DType dtype) {
    store::TensorSpec spec;
    spec.name = name;
    spec.dtype = dtype;
    spec.row_shape = std::move(row_shape);
    spec.policy = policy;
    state.partition->add(store::create_heap_tensor(spec, space.starts[0], rows));
  };
  add("emb", {4}, DType::kFloat32);
  add("emb.adagrad_sum", {4}, DType::kFloat32);
  add("emb.row_adagrad_sum", {1}, DType::kFloat32);
  add("emb.adam_m", {4}, DType::kFloat32);
  add("emb.adam_v", {4}, DType::kFloat32);
  add("emb.adam_step", {1}, DType::kFloat32);
  return s;
}

struct Servers {
  std::unique_ptr<Server> homogeneous, typed;
  std::map<std::string, std::string> store_values;
  Servers() {
    const std::string dir = fuzz::Scratch::get().path();
    homogeneous = start_server(homogeneous_graph(), dir);
    typed = start_server(typed_graph(), dir);
  }
};

size_t take_length(const uint8_t** data, size_t* size) {
  size_t n = 0;
  for (int i = 0; i < 4 && *size > 0; ++i, ++*data, --*size) n |= static_cast<size_t>(**data) << (8 * i);
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Servers servers;
  if (size < 1 + sizeof(net::Header)) return 0;
  const uint8_t choice = data[0];
  const uint8_t* header = data + 1;
  data += 1 + sizeof(net::Header);
  size -= 1 + sizeof(net::Header);
  net::Request request;
  const size_t num_frames = (choice >> 2) % 9;
  for (size_t i = 0; i < num_frames; ++i) {
    const size_t n = std::min(take_length(&data, &size), size);
    request.frames.emplace_back(data, n);
    data += n;
    size -= n;
  }
  const bool store = choice & 2;
  fuzz::expect_rejection_or_success([&] {
    try {
      request.header = net::decode_header(header, sizeof(net::Header), request.frames.size());
      net::Header reply;
      if (store) {
        request.header.type = kStoreTypes[request.header.type % std::size(kStoreTypes)];
        (void)job::store_services().dispatch(servers.store_values, request, &reply);
      } else {
        request.header.type = kPartitionTypes[request.header.type % std::size(kPartitionTypes)];
        server::ServerState& state = *((choice & 1) ? servers.typed : servers.homogeneous)->state;
        (void)server::partition_services().dispatch(state, request, &reply);
      }
    } catch (const net::ProtocolError& e) {
      // The server answers these with an error reply.
      if (std::getenv("TESSERA_FUZZ_VERBOSE")) std::fprintf(stderr, "tessera fuzz: protocol error: %s\n", e.what());
    }
  });
  return 0;
}

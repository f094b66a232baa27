#include "job/tensor_registry.h"

#include <nlohmann/json.hpp>

#include "job/rendezvous.h"
#include "tessera/base/error.h"

namespace tessera::job {
namespace {

std::string key(int machine, const std::string& name) { return "tensor/" + std::to_string(machine) + "/" + name; }

}  // namespace

void publish_tensor(Rendezvous& store, int machine, const store::LocalTensor& tensor) {
  const nlohmann::json entry = {{"spec", tensor.spec.to_json()},
                                {"segment", tensor.shm ? tensor.shm->name() : ""},
                                {"first_id", tensor.first_id}};
  store.set(key(machine, tensor.spec.name), entry.dump());
}

void unpublish_tensor(Rendezvous& store, int machine, const std::string& name) { store.remove(key(machine, name)); }

bool find_published_spec(Rendezvous& store, int num_machines, const std::string& name, store::TensorSpec* spec) {
  for (int m = 0; m < num_machines; ++m)
    if (store.check(key(m, name))) {
      *spec = store::TensorSpec::from_json(nlohmann::json::parse(store.get(key(m, name))).at("spec").get<std::string>());
      return true;
    }
  return false;
}

store::LocalTensor* resolve_tensor(store::PartitionStore& partition, Rendezvous* store, int machine,
                                   const std::string& name) {
  if (store::LocalTensor* t = partition.find(name)) return t;
  if (store == nullptr || !store->check(key(machine, name))) return nullptr;
  const nlohmann::json entry = nlohmann::json::parse(store->get(key(machine, name)));
  // A file-backed array of a partition this process did not load: its spec
  // is published, but there is no segment to map.
  if (entry.at("segment").get<std::string>().empty()) return nullptr;
  const store::TensorSpec spec = store::TensorSpec::from_json(entry.at("spec").get<std::string>());
  return &partition.add(
      store::attach_shared_tensor(spec, entry.at("first_id").get<int64_t>(), entry.at("segment").get<std::string>()));
}

}  // namespace tessera::job

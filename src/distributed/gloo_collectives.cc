// The one file of the runtime that includes c10d: collectives over
// ProcessGroupGloo, which meets its peers in the job's Rendezvous. Its TCP
// pairs carry the bytes in the clear: --insecure jobs only
// (collective_backend.h).
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "distributed/collective_backend.h"
#include "job/rendezvous.h"
#include "tessera/base/error.h"

namespace tessera::distributed {
namespace {

// Gloo meets its peers through a c10d::Store: this one is the job's own
// rendezvous store, so Gloo's addresses travel over the secured transport.
class StoreForGloo : public c10d::Store {
 public:
  explicit StoreForGloo(job::Rendezvous* rendezvous)
      : c10d::Store(std::chrono::seconds(rendezvous->timeout_s())), rendezvous_(rendezvous) {}

  void set(const std::string& key, const std::vector<uint8_t>& value) override {
    rendezvous_->set(key, std::string(value.begin(), value.end()));
  }
  std::vector<uint8_t> get(const std::string& key) override {
    const std::string value = rendezvous_->get(key);
    return std::vector<uint8_t>(value.begin(), value.end());
  }
  int64_t add(const std::string& key, int64_t value) override { return rendezvous_->add(key, value); }
  bool deleteKey(const std::string& key) override { return rendezvous_->remove(key); }
  bool check(const std::vector<std::string>& keys) override {
    return std::all_of(keys.begin(), keys.end(), [&](const std::string& k) { return rendezvous_->check(k); });
  }
  int64_t getNumKeys() override { return rendezvous_->num_keys(); }
  // torch 2's Store (c10d's Backend clones it); torch 1.13's has no clone, and without `override` this
  // compiles against both.
  c10::intrusive_ptr<c10d::Store> clone() { return c10::make_intrusive<StoreForGloo>(rendezvous_); }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!check(keys)) {
      if (std::chrono::steady_clock::now() > deadline)
        fail_peer("rendezvous store {}: {} key(s) from '{}' on did not appear within {} ms (a trainer did not start)",
                  rendezvous_->where(), keys.size(), keys.empty() ? "" : keys[0], timeout.count());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

 private:
  job::Rendezvous* rendezvous_;
};

torch::ScalarType torch_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return torch::kFloat32;
    case DType::kFloat64: return torch::kFloat64;
    case DType::kInt64: return torch::kInt64;
    default: fail("all-reduce of {} values is not supported", dtype_name(dtype));
  }
}

class GlooCollectives : public CollectiveBackend {
 public:
  GlooCollectives(job::Rendezvous& store, const std::string& prefix, int rank, int size, const std::string& my_ip,
                  int timeout_s) {
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>(prefix, c10::make_intrusive<StoreForGloo>(&store));
    auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(timeout_s));
    try {
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(my_ip));
      options->threads = 2;
      group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, rank, size, options);
    } catch (const std::exception& e) {
      fail("trainer {} of {} cannot join the Gloo group on {}: {}", rank, size, my_ip, describe(e));
    }
  }

  void all_reduce_sum(void* data, int64_t count, DType dtype) override {
    std::vector<torch::Tensor> tensors{torch::from_blob(data, {count}, torch_type(dtype))};
    try {
      group_->allreduce(tensors)->wait();
    } catch (const std::exception& e) {
      fail_peer("all-reduce failed (a trainer died?): {}", describe(e));
    }
  }

  void broadcast(void* data, int64_t bytes, int root) override {
    std::vector<torch::Tensor> tensors{torch::from_blob(data, {bytes}, torch::kUInt8)};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    try {
      group_->broadcast(tensors, options)->wait();
    } catch (const std::exception& e) {
      fail_peer("broadcast failed (a trainer died?): {}", describe(e));
    }
  }

 private:
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
};

}  // namespace

std::unique_ptr<CollectiveBackend> gloo_collectives(job::Rendezvous& store, const std::string& prefix, int rank, int size,
                                                    const std::string& my_ip, int timeout_s) {
  return std::make_unique<GlooCollectives>(store, prefix, rank, size, my_ip, timeout_s);
}

}  // namespace tessera::distributed

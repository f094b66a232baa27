// The only file of the runtime that includes libtorch: Collectives over
// c10d's ProcessGroupGloo, which meets its peers in the job's Rendezvous.
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "job/rendezvous.h"
#include "tessera/distributed/collectives.h"
#include "tessera/base/error.h"

namespace tessera::distributed {

namespace {

// Gloo meets its peers through a c10d::Store: this one is the job's own
// rendezvous store, so Gloo's addresses travel over the secured transport.
class StoreForGloo : public c10d::Store {
 public:
  explicit StoreForGloo(Rendezvous* rendezvous)
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
  Rendezvous* rendezvous_;
};

}  // namespace

struct Collectives::Impl {
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
};

Collectives::Collectives(Rendezvous* store, const std::string& prefix, int rank, int size, const std::string& my_ip,
                         int timeout_s)
    : impl_(std::make_unique<Impl>()), rank_(rank), size_(size) {
  if (size <= 1) return;
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>(prefix, c10::make_intrusive<StoreForGloo>(store));
  auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(timeout_s));
  try {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(my_ip));
    options->threads = 2;
    impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, rank, size, options);
  } catch (const std::exception& e) {
    fail("trainer {} of {} cannot join the Gloo group on {}: {}", rank, size, my_ip, describe(e));
  }
}

Collectives::~Collectives() = default;

namespace {

void run(c10d::ProcessGroupGloo* group, torch::Tensor tensor, const char* what) {
  std::vector<torch::Tensor> tensors{std::move(tensor)};
  try {
    group->allreduce(tensors)->wait();
  } catch (const std::exception& e) {
    fail("{} failed (a trainer died?): {}", what, describe(e));
  }
}

}  // namespace

void Collectives::all_reduce_sum(float* data, int64_t count) {
  if (impl_->group) run(impl_->group.get(), torch::from_blob(data, {count}, torch::kFloat32), "all-reduce");
}
void Collectives::all_reduce_sum(double* data, int64_t count) {
  if (impl_->group) run(impl_->group.get(), torch::from_blob(data, {count}, torch::kFloat64), "all-reduce");
}
void Collectives::all_reduce_sum(int64_t* data, int64_t count) {
  if (impl_->group) run(impl_->group.get(), torch::from_blob(data, {count}, torch::kInt64), "all-reduce");
}

void Collectives::broadcast(float* data, int64_t count, int root) {
  if (!impl_->group) return;
  std::vector<torch::Tensor> tensors{torch::from_blob(data, {count}, torch::kFloat32)};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  try {
    impl_->group->broadcast(tensors, options)->wait();
  } catch (const std::exception& e) {
    fail("broadcast failed (a trainer died?): {}", describe(e));
  }
}

void Collectives::barrier() {
  if (!impl_->group) return;
  try {
    impl_->group->barrier()->wait();
  } catch (const std::exception& e) {
    fail("barrier failed (a trainer died?): {}", describe(e));
  }
}

std::vector<std::vector<int64_t>> Collectives::all_gather(const std::vector<int64_t>& values) {
  if (!impl_->group) return {values};
  // Gloo gathers equal sizes: agree on the longest, pad, then trim.
  std::vector<int64_t> lengths(size_, 0);
  lengths[rank_] = static_cast<int64_t>(values.size());
  all_reduce_sum(lengths.data(), size_);
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<int64_t> all(static_cast<size_t>(longest) * size_, 0);
  std::copy(values.begin(), values.end(), all.begin() + rank_ * longest);
  all_reduce_sum(all.data(), static_cast<int64_t>(all.size()));
  std::vector<std::vector<int64_t>> out(size_);
  for (int r = 0; r < size_; ++r) out[r].assign(all.begin() + r * longest, all.begin() + r * longest + lengths[r]);
  return out;
}

}  // namespace tessera::distributed

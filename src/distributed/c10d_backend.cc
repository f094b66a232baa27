// The only file of the runtime that includes libtorch: Rendezvous and
// Collectives over c10d's TCPStore and ProcessGroupGloo.
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "distributed/rendezvous.h"
#include "tessera/base/error.h"

namespace tessera::distributed {

struct Rendezvous::Impl {
  c10::intrusive_ptr<c10d::TCPStore> store;
  std::string where;
};

struct Collectives::Impl {
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
};

Rendezvous::Rendezvous(const std::string& addr, int port, bool host, int timeout_s)
    : impl_(std::make_unique<Impl>()), timeout_s_(timeout_s) {
  impl_->where = addr + ":" + std::to_string(port);
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(port);
  options.isServer = host;
  options.waitWorkers = false;
  options.timeout = std::chrono::seconds(timeout_s);
  try {
    impl_->store = c10::make_intrusive<c10d::TCPStore>(addr, options);
  } catch (const std::exception& e) {
    if (host)
      fail("cannot host the rendezvous store on {} (machine 0's base port): {}", impl_->where, describe(e));
    fail("cannot reach the rendezvous store at {} within {} s (is machine 0's main server running?): {}",
         impl_->where, timeout_s, describe(e));
  }
}

Rendezvous::~Rendezvous() = default;

void Rendezvous::set(const std::string& key, const std::string& value) {
  try {
    impl_->store->set(key, std::vector<uint8_t>(value.begin(), value.end()));
  } catch (const std::exception& e) {
    fail("rendezvous store {}: cannot set '{}': {}", impl_->where, key, describe(e));
  }
}

std::string Rendezvous::get(const std::string& key) {
  try {
    const std::vector<uint8_t> v = impl_->store->get(key);
    return std::string(v.begin(), v.end());
  } catch (const std::exception& e) {
    fail("rendezvous store {}: no value for '{}' within {} s: {}", impl_->where, key, timeout_s_,
         describe(e));
  }
}

bool Rendezvous::check(const std::string& key) {
  try {
    return impl_->store->check({key});
  } catch (const std::exception& e) {
    fail("rendezvous store {}: {}", impl_->where, describe(e));
  }
}

int64_t Rendezvous::add(const std::string& key, int64_t delta) {
  try {
    return impl_->store->add(key, delta);
  } catch (const std::exception& e) {
    fail("rendezvous store {}: cannot add to '{}': {}", impl_->where, key, describe(e));
  }
}

void Rendezvous::remove(const std::string& key) {
  try {
    impl_->store->deleteKey(key);
  } catch (const std::exception& e) {
    fail("rendezvous store {}: cannot delete '{}': {}", impl_->where, key, describe(e));
  }
}

void Rendezvous::wait_count(const std::string& key, int64_t target) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s_);
  int64_t now = 0;
  while ((now = add(key, 0)) < target) {
    if (std::chrono::steady_clock::now() > deadline)
      fail("rendezvous store {}: '{}' reached {} of {} within {} s (a peer did not start)", impl_->where, key, now,
           target, timeout_s_);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Collectives::Collectives(Rendezvous* store, const std::string& prefix, int rank, int size, const std::string& my_ip,
                         int timeout_s)
    : impl_(std::make_unique<Impl>()), rank_(rank), size_(size) {
  if (size <= 1) return;
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>(prefix, store->impl().store);
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

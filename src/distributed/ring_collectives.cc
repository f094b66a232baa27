// Collectives on the job's secured transport: the members form a ring, each
// listening with a CURVE server socket (the job's keys, its ZAP check: a
// process without the job's key pair is refused) on an ephemeral port of
// its machine's address, published in the rendezvous store, and pushing to
// the next member's. A sum is the bandwidth-optimal ring all-reduce
// (Baidu's, as NCCL and Gloo's ring run it): size-1 steps of reduce-scatter
// and size-1 of all-gather, each member sending 2(size-1)/size of the data.
// A broadcast flows down the ring from the root.
//
// Every message is one piece of at most kPieceBytes, headed by the number
// of the collective and of the piece: pieces are sent as soon as they are
// ready (ZeroMQ's I/O thread encrypts and sends them while this thread
// reduces the ones received), and a member that called another collective,
// or with other sizes, is named instead of summing garbage.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <zmq.hpp>

#include "distributed/collective_backend.h"
#include "job/rendezvous.h"
#include "net/security.h"
#include "net/transport.h"
#include "tessera/base/error.h"

namespace tessera::distributed {
namespace {

constexpr int64_t kPieceBytes = int64_t{1} << 20;
// How long a closing member keeps trying to hand its last pieces over.
constexpr int kLingerMs = 2000;

struct PieceHeader {
  uint64_t collective;
  uint32_t piece;
  uint32_t bytes;
};

class RingCollectives : public CollectiveBackend {
 public:
  RingCollectives(job::Rendezvous& store, const std::string& prefix, int rank, int size, const std::string& my_ip,
                  int timeout_s)
      : rank_(rank),
        size_(size),
        next_((rank + 1) % size),
        prev_((rank + size - 1) % size),
        timeout_s_(timeout_s),
        who_(fmt::format("trainer {} of {}", rank, size)),
        in_(net::zmq_context(), zmq::socket_type::pull),
        out_(net::zmq_context(), zmq::socket_type::push) {
    for (zmq::socket_t* s : {&in_, &out_}) {
      // Never block a send: a step queues all its pieces before it receives.
      s->set(zmq::sockopt::sndhwm, 0);
      s->set(zmq::sockopt::rcvhwm, 0);
      s->set(zmq::sockopt::linger, kLingerMs);
    }
    net::secure_server(in_, store.security(), "the collectives of " + who_);
    const std::string wildcard = fmt::format("tcp://{}:*", my_ip);
    try {
      in_.bind(wildcard);
    } catch (const zmq::error_t& e) {
      fail("{}: the collectives cannot listen on {}: {}", who_, wildcard, e.what());
    }
    store.set(key(prefix, rank), in_.get(zmq::sockopt::last_endpoint));
    net::secure_client(out_, store.security());
    out_.connect(store.get(key(prefix, next_)));
  }

  void all_reduce_sum(void* data, int64_t count, DType dtype) override {
    switch (dtype) {
      case DType::kFloat32: return ring_all_reduce(static_cast<float*>(data), count);
      case DType::kFloat64: return ring_all_reduce(static_cast<double*>(data), count);
      case DType::kInt64: return ring_all_reduce(static_cast<int64_t*>(data), count);
      default: fail("all-reduce of {} values is not supported", dtype_name(dtype));
    }
  }

  void broadcast(void* data, int64_t bytes, int root) override {
    begin();
    auto* p = static_cast<uint8_t*>(data);
    for (int64_t at = 0; at < bytes; at += kPieceBytes) {
      const int64_t n = std::min(kPieceBytes, bytes - at);
      if (rank_ != root) receive_into(p + at, n, [](uint8_t* dst, const uint8_t* src, int64_t k) {
        std::memcpy(dst, src, k);
      });
      if (next_ != root) send(p + at, n);
    }
  }

 private:
  static std::string key(const std::string& prefix, int rank) { return fmt::format("{}ring/{}", prefix, rank); }

  void begin() {
    ++collective_;
    sent_ = received_ = 0;
  }

  void send(const void* data, int64_t bytes) {
    zmq::message_t message(sizeof(PieceHeader) + bytes);
    const PieceHeader header{collective_, sent_++, static_cast<uint32_t>(bytes)};
    std::memcpy(message.data(), &header, sizeof header);
    std::memcpy(static_cast<char*>(message.data()) + sizeof header, data, bytes);
    (void)out_.send(message, zmq::send_flags::none);
  }

  // Waits for the previous member's next piece, checks that it is the one
  // due, and combines it into `dst` (`bytes` long) with `combine`.
  template <typename T, typename Combine>
  void receive_into(T* dst, int64_t bytes, Combine combine) {
    zmq::pollitem_t item{static_cast<void*>(in_), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(int64_t{timeout_s_} * 1000)) == 0)
      fail_peer("{}: collective {} got nothing from trainer {} within {} s (it died, or is not in this collective)",
                who_, collective_, prev_, timeout_s_);
    zmq::message_t message;
    (void)in_.recv(message);
    PieceHeader header{};
    if (message.size() >= sizeof header) std::memcpy(&header, message.data(), sizeof header);
    if (message.size() != sizeof header + bytes || header.collective != collective_ || header.piece != received_ ||
        header.bytes != bytes)
      fail("{}: trainer {} sent piece {} of collective {} ({} bytes) where piece {} of collective {} ({} bytes) was "
           "due: the trainers called different collectives, or with different sizes",
           who_, prev_, header.piece, header.collective, message.size() - std::min(message.size(), sizeof header),
           received_, collective_, bytes);
    ++received_;
    const char* payload = static_cast<const char*>(message.data()) + sizeof header;
    const int64_t count = bytes / static_cast<int64_t>(sizeof(T));
    if (reinterpret_cast<uintptr_t>(payload) % alignof(T) == 0) {
      combine(dst, reinterpret_cast<const T*>(payload), count);
      return;
    }
    // libzmq hands small messages at any offset of its receive buffer; reading
    // T there in place would be a misaligned load (undefined behaviour).
    std::vector<T> realigned(static_cast<size_t>(count));
    std::memcpy(realigned.data(), payload, static_cast<size_t>(bytes));
    combine(dst, realigned.data(), count);
  }

  template <typename T>
  void ring_all_reduce(T* data, int64_t count) {
    begin();
    // Chunk c is [first(c), first(c + 1)); every member cuts the same way.
    const auto first = [&](int c) { return count * c / size_; };
    const auto chunk = [&](int step) { return ((step % size_) + size_) % size_; };
    const int64_t piece = std::max<int64_t>(1, kPieceBytes / static_cast<int64_t>(sizeof(T)));
    const auto send_chunk = [&](int c) {
      for (int64_t at = first(c); at < first(c + 1); at += piece)
        send(data + at, std::min(piece, first(c + 1) - at) * static_cast<int64_t>(sizeof(T)));
    };
    const auto receive_chunk = [&](int c, auto combine) {
      for (int64_t at = first(c); at < first(c + 1); at += piece)
        receive_into(data + at, std::min(piece, first(c + 1) - at) * static_cast<int64_t>(sizeof(T)), combine);
    };
    const auto add = [](T* dst, const T* src, int64_t n) {
      for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
    };
    const auto copy = [](T* dst, const T* src, int64_t n) { std::memcpy(dst, src, n * sizeof(T)); };
    // Reduce-scatter: after it, member r holds the full sum of chunk r + 1.
    for (int step = 0; step < size_ - 1; ++step) {
      send_chunk(chunk(rank_ - step));
      receive_chunk(chunk(rank_ - step - 1), add);
    }
    // All-gather: the sums travel once around the ring.
    for (int step = 0; step < size_ - 1; ++step) {
      send_chunk(chunk(rank_ + 1 - step));
      receive_chunk(chunk(rank_ - step), copy);
    }
  }

  const int rank_, size_, next_, prev_, timeout_s_;
  const std::string who_;
  zmq::socket_t in_, out_;
  uint64_t collective_ = 0;
  uint32_t sent_ = 0, received_ = 0;
};

}  // namespace

std::unique_ptr<CollectiveBackend> ring_collectives(job::Rendezvous& store, const std::string& prefix, int rank, int size,
                                                    const std::string& my_ip, int timeout_s) {
  return std::make_unique<RingCollectives>(store, prefix, rank, size, my_ip, timeout_s);
}

}  // namespace tessera::distributed

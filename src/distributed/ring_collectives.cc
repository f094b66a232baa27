// Collectives on the job's secured transport: the members form a ring, each
// listening on an ephemeral port of its machine's address, published in the
// rendezvous store, and pushing to the next member's. Every piece is sealed
// by its sender (piece_cipher.h: AES-256-GCM under the sender's key,
// derived from the job's secret key), so only the job's processes can read
// or forge one; a message that does not open is dropped, as is a piece
// replayed from earlier, and the wait for the real one goes on. A sum is the
// bandwidth-optimal ring all-reduce (Baidu's, as NCCL and Gloo's ring run
// it): size-1 steps of reduce-scatter and size-1 of all-gather, each member
// sending 2(size-1)/size of the data. A broadcast flows down the ring from
// the root.
//
// Every message is one piece of at most kPieceBytes, headed by the number
// of the collective and of the piece: pieces are sent as soon as they are
// sealed (ZeroMQ's I/O thread sends them while this thread opens and
// reduces the ones received), and a member that called another collective,
// or with other sizes, is named instead of summing garbage.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <zmq.hpp>

#include "distributed/collective_backend.h"
#include "distributed/piece_cipher.h"
#include "job/rendezvous.h"
#include "net/security.h"
#include "net/transport.h"
#include "tessera/base/error.h"

namespace tessera::distributed {
namespace {

constexpr int64_t kPieceBytes = int64_t{1} << 20;
// How long a closing member keeps trying to hand its last pieces over.
constexpr int kLingerMs = 2000;

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
        out_(net::zmq_context(), zmq::socket_type::push),
        scratch_(static_cast<size_t>(kPieceBytes) / sizeof(uint64_t)) {
    for (zmq::socket_t* s : {&in_, &out_}) {
      // Never block a send: a step queues all its pieces before it receives.
      s->set(zmq::sockopt::sndhwm, 0);
      s->set(zmq::sockopt::rcvhwm, 0);
      s->set(zmq::sockopt::linger, kLingerMs);
    }
    const std::string wildcard = fmt::format("tcp://{}:*", my_ip);
    try {
      in_.bind(wildcard);
    } catch (const zmq::error_t& e) {
      fail("{}: the collectives cannot listen on {}: {}", who_, wildcard, e.what());
    }
    // "endpoint salt" under the member's key: where to send to it, and the salt of the key it seals with (the
    // store key names the sender in the cipher's context too).
    const std::string secret = store.security().keys.secret_key, salt = PieceCipher::new_salt();
    sealer_ = std::make_unique<PieceCipher>(secret, key(prefix, rank), salt);
    store.set(key(prefix, rank), in_.get(zmq::sockopt::last_endpoint) + " " + salt);
    out_.connect(field(store.get(key(prefix, next_)), 0));
    opener_ = std::make_unique<PieceCipher>(secret, key(prefix, prev_), field(store.get(key(prefix, prev_)), 1));
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
      if (rank_ != root) receive_into(p + at, n, /*add=*/false);
      if (next_ != root) send(p + at, n);
    }
  }

 private:
  static std::string key(const std::string& prefix, int rank) { return fmt::format("{}ring/{}", prefix, rank); }
  // Field i of a published "endpoint salt".
  static std::string field(const std::string& published, int i) {
    const size_t space = published.find(' ');
    if (space == std::string::npos) fail("the collectives' published entry '{}' has no salt", published);
    return i == 0 ? published.substr(0, space) : published.substr(space + 1);
  }

  void begin() {
    ++collective_;
    sent_ = received_ = 0;
  }

  void send(const void* data, int64_t bytes) {
    zmq::message_t message(sizeof(PieceHeader) + bytes + kPieceTagBytes);
    const PieceHeader header{collective_, sent_++, static_cast<uint32_t>(bytes)};
    std::memcpy(message.data(), &header, sizeof header);
    sealer_->seal(header, data, static_cast<char*>(message.data()) + sizeof header);
    (void)out_.send(message, zmq::send_flags::none);
  }

  // The next message from the previous member, by the deadline.
  zmq::message_t next_message(std::chrono::steady_clock::time_point deadline) {
    zmq::pollitem_t item{static_cast<void*>(in_), 0, ZMQ_POLLIN, 0};
    using std::chrono::milliseconds;
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || zmq::poll(&item, 1, left) == 0)
      fail_peer("{}: collective {} got nothing from trainer {} within {} s (it died, or is not in this collective)",
                who_, collective_, prev_, timeout_s_);
    zmq::message_t message;
    (void)in_.recv(message);
    return message;
  }

  // A message that is not the job's: dropped, and said once.
  void drop(const char* why) {
    if (dropped_++ == 0)
      fmt::print(stderr, "the collectives of {}: dropped a message that {} (not from the job's trainer {})\n", who_,
                 why, prev_);
  }

  // Waits for the previous member's next piece, opens it (checking that it
  // is the one due) and adds it into `dst` (`bytes` long), or copies it.
  template <typename T>
  void receive_into(T* dst, int64_t bytes, bool add) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s_);
    for (;;) {
      const zmq::message_t message = next_message(deadline);
      PieceHeader header{};
      if (message.size() >= sizeof header) std::memcpy(&header, message.data(), sizeof header);
      if (message.size() < sizeof header + kPieceTagBytes || header.bytes > kPieceBytes ||
          message.size() != sizeof header + header.bytes + kPieceTagBytes) {
        drop("is not a sealed piece");
        continue;
      }
      const char* sealed = static_cast<const char*>(message.data()) + sizeof header;
      const bool due = header.collective == collective_ && header.piece == received_ && header.bytes == bytes;
      // A copy opens straight into place (a refused piece's garbage there is overwritten by the real one).
      void* plain = due && !add ? static_cast<void*>(dst) : static_cast<void*>(scratch_.data());
      if (!opener_->open(header, sealed, plain)) {
        drop("does not open under the job's keys");
        continue;
      }
      if (!due) {
        if (header.collective < collective_ || (header.collective == collective_ && header.piece < received_)) {
          drop("replays an earlier piece");
          continue;
        }
        fail("{}: trainer {} sent piece {} of collective {} ({} bytes) where piece {} of collective {} ({} bytes) "
             "was due: the trainers called different collectives, or with different sizes",
             who_, prev_, header.piece, header.collective, header.bytes, received_, collective_, bytes);
      }
      ++received_;
      if (add) {
        const T* src = reinterpret_cast<const T*>(scratch_.data());
        const int64_t count = bytes / static_cast<int64_t>(sizeof(T));
        for (int64_t i = 0; i < count; ++i) dst[i] += src[i];
      }
      return;
    }
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
    const auto receive_chunk = [&](int c, bool add) {
      for (int64_t at = first(c); at < first(c + 1); at += piece)
        receive_into(data + at, std::min(piece, first(c + 1) - at) * static_cast<int64_t>(sizeof(T)), add);
    };
    // Reduce-scatter: after it, member r holds the full sum of chunk r + 1.
    for (int step = 0; step < size_ - 1; ++step) {
      send_chunk(chunk(rank_ - step));
      receive_chunk(chunk(rank_ - step - 1), /*add=*/true);
    }
    // All-gather: the sums travel once around the ring.
    for (int step = 0; step < size_ - 1; ++step) {
      send_chunk(chunk(rank_ + 1 - step));
      receive_chunk(chunk(rank_ - step), /*add=*/false);
    }
  }

  const int rank_, size_, next_, prev_, timeout_s_;
  const std::string who_;
  zmq::socket_t in_, out_;
  std::unique_ptr<PieceCipher> sealer_, opener_;  // this member's key; the previous member's
  std::vector<uint64_t> scratch_;  // a piece opened for adding (8-byte aligned for every T)
  uint64_t collective_ = 0;
  uint32_t sent_ = 0, received_ = 0;
  int64_t dropped_ = 0;
};

}  // namespace

std::unique_ptr<CollectiveBackend> ring_collectives(job::Rendezvous& store, const std::string& prefix, int rank, int size,
                                                    const std::string& my_ip, int timeout_s) {
  return std::make_unique<RingCollectives>(store, prefix, rank, size, my_ip, timeout_s);
}

}  // namespace tessera::distributed

// The secured ring's own authenticated encryption of the pieces it sends (ring_collectives.cc). The ring's
// bytes once went through ZeroMQ's CURVE, whose cipher (XSalsa20-Poly1305 at ~1.7 GB/s a core here, plus
// libzmq's copies into padded buffers) held a 16 MB all-reduce to ~0.6 of what an encrypted exchange can
// reach. OpenSSL's AES-256-GCM runs at ~4 GB/s (AES-NI and carry-less multiply; libsodium's builds of the
// same AEADs measured 1.4-1.8 here) and seals straight into the message a piece travels in.
//
// Keys: each member seals what it sends under a key of its own, HMAC-SHA256 keyed by the job's secret key
// over a context (the group's prefix and the member's rank) and a salt the member draws when it joins
// (published in the rendezvous store, whose connection is CURVE-encrypted). Only the job's processes hold the
// secret key, so only they can seal or open; a fresh salt per member and group makes the key fresh, so the
// nonce, the piece's (collective, piece) numbers, is never reused under one key. The header travels in the
// clear as associated data: it is authenticated, and a recorded piece replayed later carries numbers already
// passed.
//
// Contract: a piece that open() refuses leaves `plain` undefined. One object belongs to one thread at a time
// (it keeps OpenSSL's keyed context). Errors are tessera::Error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;

namespace tessera::distributed {

// What precedes every piece on the wire.
struct PieceHeader {
  uint64_t collective;
  uint32_t piece;
  uint32_t bytes;  // of plaintext; the sealed piece is bytes + kPieceTagBytes
};

constexpr size_t kPieceTagBytes = 16;  // GCM's

class PieceCipher {
 public:
  // 32 random bytes from OpenSSL, as 64 hex digits.
  static std::string new_salt();
  // job_secret_z85: the job's CURVE secret key (Z85); context names the
  // sender (group prefix and rank); salt_hex: the sender's new_salt().
  PieceCipher(const std::string& job_secret_z85, const std::string& context, const std::string& salt_hex);
  ~PieceCipher();
  PieceCipher(const PieceCipher&) = delete;
  PieceCipher& operator=(const PieceCipher&) = delete;

  // Writes header.bytes bytes of `plain`, sealed, then the tag, at `sealed`.
  void seal(const PieceHeader& header, const void* plain, void* sealed);
  // Opens header.bytes bytes (and the tag after them) at `sealed` into
  // `plain`; false when they do not authenticate under this key.
  bool open(const PieceHeader& header, const void* sealed, void* plain);

 private:
  struct FreeContext {
    void operator()(EVP_CIPHER_CTX* ctx) const;
  };
  std::unique_ptr<EVP_CIPHER_CTX, FreeContext> ctx_;  // AES-256-GCM under this sender's key
};

}  // namespace tessera::distributed

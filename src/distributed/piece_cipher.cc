#include "distributed/piece_cipher.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <zmq.h>

#include <cstring>

#include <fmt/format.h>

#include "tessera/base/error.h"

namespace tessera::distributed {
namespace {

constexpr int kNonceBytes = 12;  // GCM's: the piece's numbers
static_assert(sizeof(PieceHeader::collective) + sizeof(PieceHeader::piece) == kNonceBytes);

void nonce_of(const PieceHeader& header, unsigned char* nonce) {
  std::memcpy(nonce, &header.collective, sizeof header.collective);
  std::memcpy(nonce + sizeof header.collective, &header.piece, sizeof header.piece);
}

}  // namespace

std::string PieceCipher::new_salt() {
  unsigned char salt[32];
  if (RAND_bytes(salt, sizeof salt) != 1) fail("the collectives cannot draw a salt: OpenSSL's random source failed");
  std::string hex;
  for (const unsigned char b : salt) hex += fmt::format("{:02x}", b);
  return hex;
}

void PieceCipher::FreeContext::operator()(EVP_CIPHER_CTX* ctx) const { EVP_CIPHER_CTX_free(ctx); }

// ctx_ owns the context from here, so a constructor that fails below frees it too.
PieceCipher::PieceCipher(const std::string& job_secret_z85, const std::string& context, const std::string& salt_hex)
    : ctx_(EVP_CIPHER_CTX_new()) {
  if (ctx_ == nullptr) fail("the collectives of {}: OpenSSL cannot make a cipher context", context);
  unsigned char secret[32];
  if (job_secret_z85.size() != 40 || zmq_z85_decode(secret, job_secret_z85.c_str()) == nullptr)
    fail("the collectives of {}: the job's secret key is not a Z85 CURVE key", context);
  if (salt_hex.size() != 64 || salt_hex.find_first_not_of("0123456789abcdef") != std::string::npos)
    fail("the collectives of {}: its salt '{}' is not 64 hex digits", context, salt_hex);
  // HMAC-SHA256 as the PRF (HKDF's expand step): the key is the job secret's, this sender's and this salt's.
  const std::string info = "tessera ring pieces v1\n" + context + "\n" + salt_hex;
  unsigned char key[32];
  unsigned int key_len = 0;
  if (HMAC(EVP_sha256(), secret, sizeof secret, reinterpret_cast<const unsigned char*>(info.data()), info.size(), key,
           &key_len) == nullptr ||
      key_len != sizeof key)
    fail("the collectives of {}: OpenSSL cannot derive the ring's key", context);
  OPENSSL_cleanse(secret, sizeof secret);
  // The key is set once; each piece sets only its nonce.
  const bool ok = EVP_CipherInit_ex(ctx_.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr, -1) == 1 &&
                  EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
                  EVP_CipherInit_ex(ctx_.get(), nullptr, nullptr, key, nullptr, -1) == 1;
  OPENSSL_cleanse(key, sizeof key);
  if (!ok) fail("the collectives of {}: OpenSSL cannot key AES-256-GCM", context);
}

PieceCipher::~PieceCipher() = default;

void PieceCipher::seal(const PieceHeader& header, const void* plain, void* sealed) {
  unsigned char nonce[kNonceBytes];
  nonce_of(header, nonce);
  auto* out = static_cast<unsigned char*>(sealed);
  int len = 0, tail = 0;
  EVP_CIPHER_CTX* ctx = ctx_.get();
  const auto* ad = reinterpret_cast<const unsigned char*>(&header);
  if (EVP_CipherInit_ex(ctx, nullptr, nullptr, nullptr, nonce, 1) != 1 ||
      EVP_CipherUpdate(ctx, nullptr, &len, ad, sizeof header) != 1 ||
      EVP_CipherUpdate(ctx, out, &len, static_cast<const unsigned char*>(plain), static_cast<int>(header.bytes)) != 1 ||
      EVP_CipherFinal_ex(ctx, out + len, &tail) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, kPieceTagBytes, out + header.bytes) != 1)
    fail("the collectives: OpenSSL cannot seal piece {} of collective {}", header.piece, header.collective);
}

bool PieceCipher::open(const PieceHeader& header, const void* sealed, void* plain) {
  unsigned char nonce[kNonceBytes];
  nonce_of(header, nonce);
  const auto* in = static_cast<const unsigned char*>(sealed);
  unsigned char tag[kPieceTagBytes];
  std::memcpy(tag, in + header.bytes, sizeof tag);
  int len = 0, tail = 0;
  EVP_CIPHER_CTX* ctx = ctx_.get();
  const auto* ad = reinterpret_cast<const unsigned char*>(&header);
  auto* out = static_cast<unsigned char*>(plain);
  if (EVP_CipherInit_ex(ctx, nullptr, nullptr, nullptr, nonce, 0) != 1 ||
      EVP_CipherUpdate(ctx, nullptr, &len, ad, sizeof header) != 1 ||
      EVP_CipherUpdate(ctx, out, &len, in, static_cast<int>(header.bytes)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kPieceTagBytes, tag) != 1)
    fail("the collectives: OpenSSL cannot open piece {} of collective {}", header.piece, header.collective);
  return EVP_CipherFinal_ex(ctx, out + len, &tail) == 1;
}

}  // namespace tessera::distributed

#include "wire_bounds.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <sodium.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double process_cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

[[noreturn]] void die(const char* what) {
  std::perror(what);
  std::exit(1);
}

int listen_loopback(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 1) != 0)
    die("bench_collectives: listen");
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) die("bench_collectives: connect");
  return fd;
}

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t k = ::write(fd, p, std::min<size_t>(n, 1 << 20));
    if (k <= 0) die("bench_collectives: write");
    p += k;
    n -= static_cast<size_t>(k);
  }
}

void read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    const ssize_t k = ::read(fd, p, n);
    if (k <= 0) die("bench_collectives: read");
    p += k;
    n -= static_cast<size_t>(k);
  }
}

// One member's all-reduce over the connection `fd`: `mine` is which half it reduces.
void ring_member(int fd, std::vector<float>& data, std::vector<float>& scratch, int mine) {
  const size_t half = data.size() / 2, half_bytes = half * sizeof(float);
  float* const own = data.data() + static_cast<size_t>(mine) * half;
  float* const other = data.data() + static_cast<size_t>(1 - mine) * half;
  // Reduce-scatter: send the peer its half, receive ours from it, add.
  std::thread send([&] { write_all(fd, reinterpret_cast<const char*>(other), half_bytes); });
  read_all(fd, reinterpret_cast<char*>(scratch.data()), half_bytes);
  send.join();
  for (size_t i = 0; i < half; ++i) own[i] += scratch[i];
  // All-gather: send our reduced half, receive the peer's.
  std::thread send2([&] { write_all(fd, reinterpret_cast<const char*>(own), half_bytes); });
  read_all(fd, reinterpret_cast<char*>(other), half_bytes);
  send2.join();
}

using Encrypt = void (*)(const unsigned char* in, size_t n, unsigned char* out);

void evp_encrypt(const EVP_CIPHER* cipher, const unsigned char* in, size_t n, unsigned char* out) {
  static const unsigned char key[32] = {1}, iv[12] = {2};
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int len = 0;
  if (ctx == nullptr || EVP_EncryptInit_ex(ctx, cipher, nullptr, key, iv) != 1 ||
      EVP_EncryptUpdate(ctx, out, &len, in, static_cast<int>(n)) != 1 || EVP_EncryptFinal_ex(ctx, out + len, &len) != 1)
    die("bench_collectives: libcrypto");
  unsigned char tag[16];
  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, sizeof tag, tag);
  EVP_CIPHER_CTX_free(ctx);
}

double cipher_gbps(Encrypt encrypt) {
  constexpr size_t kMessage = 1 << 20;
  std::vector<unsigned char> in(kMessage, 7), out(kMessage + 64);
  for (int i = 0; i < 8; ++i) encrypt(in.data(), kMessage, out.data());  // warm up
  size_t bytes = 0;
  const auto start = Clock::now();
  while (seconds_since(start) < 0.3) {
    encrypt(in.data(), kMessage, out.data());
    bytes += kMessage;
  }
  return static_cast<double>(bytes) / seconds_since(start) / 1e9;
}

}  // namespace

double loopback_tcp_gbps(size_t total, size_t chunk) {
  int port = 0;
  const int listener = listen_loopback(&port);
  std::thread reader([&] {
    const int fd = ::accept(listener, nullptr, nullptr);
    std::vector<char> buffer(chunk);
    size_t got = 0;
    while (got < total) {
      const ssize_t n = ::read(fd, buffer.data(), buffer.size());
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    ::close(fd);
  });
  const int fd = connect_loopback(port);
  std::vector<char> buffer(chunk, 1);
  const auto start = Clock::now();
  for (size_t sent = 0; sent < total; sent += chunk) write_all(fd, buffer.data(), std::min(chunk, total - sent));
  ::close(fd);
  reader.join();
  const double s = seconds_since(start);
  ::close(listener);
  return static_cast<double>(total) / s / 1e9;
}

int free_loopback_port() {
  int port = 0;
  ::close(listen_loopback(&port));
  return port;
}

ClearExchange clear_exchange(size_t bytes, int rounds) {
  int port = 0;
  const int listener = listen_loopback(&port);
  const int a = connect_loopback(port);
  const int b = ::accept(listener, nullptr, nullptr);
  const size_t n = bytes / sizeof(float);
  std::vector<float> data_a(n, 1.0f), data_b(n, 1.0f), scratch_a(n / 2), scratch_b(n / 2);
  std::vector<double> walls;
  double cpu = 0;
  for (int round = 0; round <= rounds; ++round) {  // round 0 warms up (page faults of fresh buffers)
    const double cpu0 = process_cpu_s();
    const auto start = Clock::now();
    std::thread peer([&] { ring_member(b, data_b, scratch_b, 1); });
    ring_member(a, data_a, scratch_a, 0);
    peer.join();
    if (round == 0) continue;
    walls.push_back(seconds_since(start));
    cpu += process_cpu_s() - cpu0;
  }
  ::close(a);
  ::close(b);
  ::close(listener);
  std::sort(walls.begin(), walls.end());
  return {walls[walls.size() / 2], cpu / rounds};
}

std::vector<Cipher> aead_ciphers() {
  if (sodium_init() < 0) die("bench_collectives: libsodium");
  std::vector<Cipher> out{
      {"AES-256-GCM", cipher_gbps([](const unsigned char* in, size_t n, unsigned char* o) {
         evp_encrypt(EVP_aes_256_gcm(), in, n, o);
       })},
      {"ChaCha20-Poly1305", cipher_gbps([](const unsigned char* in, size_t n, unsigned char* o) {
         evp_encrypt(EVP_chacha20_poly1305(), in, n, o);
       })},
      {"XSalsa20-Poly1305 (CURVE)", cipher_gbps([](const unsigned char* in, size_t n, unsigned char* o) {
         static const unsigned char key[crypto_secretbox_KEYBYTES] = {1}, nonce[crypto_secretbox_NONCEBYTES] = {2};
         crypto_secretbox_easy(o, in, n, nonce, key);
       })},
  };
  std::sort(out.begin(), out.end(), [](const Cipher& x, const Cipher& y) { return x.gbps > y.gbps; });
  return out;
}

double encrypted_floor_s(size_t bytes, const ClearExchange& clear, double cipher_gbps) {
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  const double cipher_s = 4.0 * static_cast<double>(bytes) / (cipher_gbps * 1e9);
  return std::max(clear.wall_s, (clear.cpu_s + cipher_s) / cores);
}

}  // namespace bench

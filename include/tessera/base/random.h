// Small, fast, seedable random number generation. Work that runs in parallel splits into a fixed number of
// chunks, each with its own stream Rng(seed, chunk), so results depend on the seed only, not on the thread count.
//
// An Rng is a 32-byte value that owns its state; copying it copies the stream. It has no locks: one Rng belongs
// to one thread at a time (give each thread or chunk its own). Everything here is header-only, allocates nothing
// and throws nothing; below(n) requires n > 0.
#pragma once

#include <cmath>
#include <cstdint>

namespace tessera {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// xoshiro256** by Blackman and Vigna: 4 words of state, passes BigCrush.
class Rng {
 public:
  explicit Rng(uint64_t seed, uint64_t stream = 0) {
    uint64_t x = splitmix64(seed ^ splitmix64(stream + 0x632be59bd9b4e019ULL));
    for (auto& word : s_) word = x = splitmix64(x);
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double uniform() { return (next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift, bias < 2^-64 * n).
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  // Standard normal (Box-Muller; one value per call keeps the stream simple).
  double normal() {
    double u1 = uniform();
    double u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace tessera

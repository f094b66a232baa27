// What the wire and the CPU allow a 2-member all-reduce on one host, measured
// in the bench's own run (bench/collectives.cc prints them beside the wires):
//
//  - one loopback TCP stream: the bound issue 47 names;
//  - the 2-member ring's own traffic on plain sockets, no cipher, no
//    framework: each member sends half, receives the other half and adds it,
//    then sends its reduced half and receives the other; both directions at
//    once, as the ring runs them. Its wall time and the CPU time it takes;
//  - the fastest AEAD cipher this host's libcrypto offers, bytes per second
//    on one core (AES-256-GCM and ChaCha20-Poly1305; CURVE's XSalsa20-Poly1305
//    for reference, through libsodium as ZeroMQ uses it).
//
// From these, the least time any encrypted 2-member all-reduce of S bytes can
// take here (encrypted_floor_s): each member encrypts the S bytes it sends and
// decrypts the S it receives, 4S of cipher work in all, on top of the clear
// exchange's CPU time, and two cores share that work at best.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace bench {

// GB/s of one TCP stream over loopback between two threads: `total` bytes in
// writes of `chunk`.
double loopback_tcp_gbps(size_t total = size_t{256} << 20, size_t chunk = size_t{1} << 20);

// A port that is free on 127.0.0.1 now.
int free_loopback_port();

struct ClearExchange {
  double wall_s = 0;  // median over the rounds
  double cpu_s = 0;   // the process's CPU time over the same rounds, per round (both members)
};
// The ring's exchange of `bytes` of float32 between two threads of this
// process over one loopback connection, `rounds` times (one more to warm up).
ClearExchange clear_exchange(size_t bytes, int rounds);

struct Cipher {
  std::string name;
  double gbps = 0;  // encryption of 1 MB messages on one core
};
// AES-256-GCM, ChaCha20-Poly1305 (libcrypto) and XSalsa20-Poly1305
// (libsodium's crypto_secretbox, CURVE's cipher), fastest first.
std::vector<Cipher> aead_ciphers();

// The least wall time of an encrypted 2-member all-reduce of `bytes`, given
// the clear exchange's cost and a cipher of `cipher_gbps` per core on 2 cores.
double encrypted_floor_s(size_t bytes, const ClearExchange& clear, double cipher_gbps);

}  // namespace bench

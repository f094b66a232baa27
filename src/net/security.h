// Who may talk to a job: every ZeroMQ socket of a job speaks CURVE (libzmq's
// authenticated encryption, over libsodium) with one key pair made fresh for
// the job by the launcher, and every server accepts, through a ZAP handler,
// only clients that hold that pair. With `insecure`, a trusted network's
// choice, sockets speak PLAIN instead: the job's token still authenticates
// every connection, but bytes travel in the clear (and so does the token:
// PLAIN is authentication against strangers, not against eavesdroppers).
//
// Keys never appear on a command line or in an environment: they live in a
// key file of mode 0600 (TESSERA_KEY_FILE names it), written by the launcher
// under /dev/shm (tmpfs: never on a disk) and on remote hosts by the ssh
// wrapper, which reads them from the ssh channel's stdin.
#pragma once

#include <string>

#include <zmq.hpp>

namespace tessera::net {

struct JobKeys {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;  // Z85, 40 characters
  std::string token;       // Z85, 40 characters: PLAIN's password under --insecure
};

struct Security {
  JobKeys keys;
  bool encrypt = true;  // false: PLAIN (authenticated, not encrypted)
};

// A fresh CURVE key pair and token from libsodium's random source.
JobKeys generate_job_keys();
// The key file's text ("public ...\nsecret ...\ntoken ...\n").
std::string key_file_text(const JobKeys& keys);
// Writes the key file with mode 0600 under a temporary name, then renames it.
void write_key_file(const std::string& path, const JobKeys& keys);
// Reads a key file; refuses one that others may read (mode beyond 0600) or
// that is malformed, naming the file and line.
JobKeys read_key_file(const std::string& path);

// Makes `socket` a server of the job: CURVE (or PLAIN) server with the job's
// keys, checked by the process's ZAP handler, which logs each refused
// address once, naming `who`.
void secure_server(zmq::socket_t& socket, const Security& security, const std::string& who);
// Makes `socket` a client of the job.
void secure_client(zmq::socket_t& socket, const Security& security);

}  // namespace tessera::net

#include "net/security.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "net/zap_handler.h"
#include "tessera/base/error.h"

namespace tessera::net {
namespace {

constexpr size_t kZ85KeyChars = 40;

void check_curve_available() {
  if (!zmq_has("curve"))
    fail("this libzmq was built without CURVE (libsodium); Tessera needs it to authenticate and encrypt a job's "
         "traffic");
}

std::pair<std::string, std::string> new_pair() {
  check_curve_available();
  char public_key[kZ85KeyChars + 1];
  char secret_key[kZ85KeyChars + 1];
  if (zmq_curve_keypair(public_key, secret_key) != 0) fail("cannot make a CURVE key pair: {}", zmq_strerror(zmq_errno()));
  return {public_key, secret_key};
}

bool is_z85_key(const std::string& text) {
  uint8_t binary[32];
  return text.size() == kZ85KeyChars && zmq_z85_decode(binary, text.c_str()) != nullptr;
}

}  // namespace

JobKeys generate_job_keys() {
  JobKeys keys;
  std::tie(keys.public_key, keys.secret_key) = new_pair();
  keys.token = new_pair().second;  // 32 random bytes, Z85: only ever compared
  return keys;
}

std::string key_file_text(const JobKeys& keys) {
  return fmt::format("public {}\nsecret {}\ntoken {}\n", keys.public_key, keys.secret_key, keys.token);
}

void write_key_file(const std::string& path, const JobKeys& keys) {
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) fail("cannot write the job's key file {}: {}", temp, std::strerror(errno));
  const std::string text = key_file_text(keys);
  const bool written = ::fchmod(fd, 0600) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int saved = errno;
  ::close(fd);
  if (!written || ::rename(temp.c_str(), path.c_str()) != 0) {
    ::unlink(temp.c_str());
    fail("cannot write the job's key file {}: {}", path, std::strerror(written ? errno : saved));
  }
}

JobKeys read_key_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail("cannot read the job's key file {}: {}", path, std::strerror(errno));
  if ((st.st_mode & 077) != 0)
    fail("the job's key file {} may be read by other users (mode {:o}); it must be 0600 (chmod 600 {})", path,
         st.st_mode & 0777, path);
  std::ifstream in(path);
  if (!in) fail("cannot read the job's key file {}", path);
  JobKeys keys;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, value, extra;
    fields >> name >> value;
    if (!is_z85_key(value) || (fields >> extra))
      fail("{}:{}: expected '<public|secret|token> <40 Z85 characters>' (tessera keygen writes this file)", path,
           number);
    if (name == "public") keys.public_key = value;
    else if (name == "secret") keys.secret_key = value;
    else if (name == "token") keys.token = value;
    else fail("{}:{}: unknown entry '{}' (expected public, secret or token)", path, number, name);
  }
  if (keys.public_key.empty() || keys.secret_key.empty() || keys.token.empty())
    fail("{} lacks the job's {} (tessera keygen writes a complete key file)", path,
         keys.public_key.empty() ? "public key" : keys.secret_key.empty() ? "secret key" : "token");
  char derived[kZ85KeyChars + 1];
  if (zmq_curve_public(derived, keys.secret_key.c_str()) != 0 || keys.public_key != derived)
    fail("{}: the public key does not belong to the secret key", path);
  return keys;
}

void secure_server(zmq::socket_t& socket, const Security& security, const std::string& who) {
  accept_job_keys(security, who);
  socket.set(zmq::sockopt::zap_domain, "tessera");
  if (security.encrypt) {
    check_curve_available();
    socket.set(zmq::sockopt::curve_server, true);
    socket.set(zmq::sockopt::curve_secretkey, security.keys.secret_key);
  } else {
    socket.set(zmq::sockopt::plain_server, true);
  }
}

void secure_client(zmq::socket_t& socket, const Security& security) {
  if (security.encrypt) {
    check_curve_available();
    // One pair for the whole job: each client proves it holds the job's
    // secret, and knows the servers' public key because it is its own.
    socket.set(zmq::sockopt::curve_serverkey, security.keys.public_key);
    socket.set(zmq::sockopt::curve_publickey, security.keys.public_key);
    socket.set(zmq::sockopt::curve_secretkey, security.keys.secret_key);
  } else {
    socket.set(zmq::sockopt::plain_username, "tessera");
    socket.set(zmq::sockopt::plain_password, security.keys.token);
  }
}

}  // namespace tessera::net

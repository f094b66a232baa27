#include "port_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tessera/base/error.h"

namespace tessera::launch {

bool port_free(const std::string& ip, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("cannot create a socket to check port {}: {}", port, std::strerror(errno));
  // SO_REUSEADDR on, as ZeroMQ and the c10d store set it on their listeners:
  // then a listener or any socket bound without it still blocks us, but the
  // TIME_WAIT leftovers of the previous job do not, just as they will not
  // block the servers. Without it, rerunning a job would fail for a minute.
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, ip.c_str(), &addr.sin_addr);
  const bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok && err != EADDRINUSE) fail("cannot check port {} on {}: {}", port, ip, std::strerror(err));
  return ok;
}

}  // namespace tessera::launch

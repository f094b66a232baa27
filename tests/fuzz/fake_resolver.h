// A name resolver for the fuzz targets that read host names: getaddrinfo()
// would ask DNS, which is slow, not deterministic and not there offline.
// Defined in the target's executable, these replace libc's for the code
// linked into it: "localhost" and names ending in ".test" resolve to
// 127.0.0.1, any other name does not resolve.
#pragma once

#include <netdb.h>
#include <netinet/in.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

extern "C" int getaddrinfo(const char* node, const char* /*service*/, const struct addrinfo* /*hints*/,
                           struct addrinfo** res) {
  const std::string_view name = node ? node : "";
  const bool known = name == "localhost" || (name.size() > 5 && name.substr(name.size() - 5) == ".test");
  if (!known) return EAI_NONAME;
  auto* info = static_cast<addrinfo*>(std::calloc(1, sizeof(addrinfo) + sizeof(sockaddr_in)));
  auto* addr = reinterpret_cast<sockaddr_in*>(info + 1);
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  info->ai_family = AF_INET;
  info->ai_socktype = SOCK_STREAM;
  info->ai_addrlen = sizeof(sockaddr_in);
  info->ai_addr = reinterpret_cast<sockaddr*>(addr);
  *res = info;
  return 0;
}

extern "C" void freeaddrinfo(struct addrinfo* res) { std::free(res); }

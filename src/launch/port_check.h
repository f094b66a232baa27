// Finding ports that are taken before any process starts: a server that
// cannot bind fails only after its peers have started and waited for it.
#pragma once

#include <string>

namespace tessera::launch {

// Whether a TCP listener could bind `ip`:`port` now (IPv4, this host).
bool port_free(const std::string& ip, int port);

}  // namespace tessera::launch

// The process's ZAP handler (ZeroMQ RFC 27): libzmq asks it about every
// connection a CURVE or PLAIN server socket of this process receives. It
// accepts the keys of the jobs this process serves and refuses any other;
// each refused address is logged once, so a peer that keeps retrying
// neither floods the log nor slows the server (ZAP runs on its own thread).
#pragma once

#include <string>

#include "net/security.h"

namespace tessera::net {

// Starts the handler on first use and adds `security`'s keys to those it
// accepts; `who` names the server in its log lines.
void accept_job_keys(const Security& security, const std::string& who);

}  // namespace tessera::net

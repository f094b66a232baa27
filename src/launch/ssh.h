// Command lines that reach another host: ssh with options that never prompt
// and notice a dead peer within seconds, and the quoting a remote shell needs.
// Shared by `tessera launch` (ssh_spawner.cc, remote_check.cc) and
// `tessera copy` (rsync's -e).
#pragma once

#include <string>

#include "launch/launch.h"

namespace tessera::launch {

// `s` as one word for a POSIX shell: 'it'"'"'s'.
std::string shell_quote(const std::string& s);

// "ssh -o BatchMode=yes ... [-p P] [-l U] [-i K]", without the host: the
// transport for rsync -e, and the start of ssh_command_line.
std::string ssh_transport(const SshOptions& options);

// A local /bin/sh command line that runs `remote_command` on `host` with
// /bin/sh (whatever the user's login shell is).
std::string ssh_command_line(const std::string& host, const SshOptions& options, const std::string& remote_command);

}  // namespace tessera::launch

#include "ssh.h"

#include <algorithm>

#include <fmt/format.h>

namespace tessera::launch {

std::string shell_quote(const std::string& s) {
  std::string quoted = "'";
  for (char c : s) quoted += c == '\'' ? std::string("'\"'\"'") : std::string(1, c);
  return quoted + "'";
}

std::string ssh_transport(const SshOptions& o) {
  // BatchMode: a missing key is an error, not a password prompt nobody sees.
  // ServerAlive: a host that vanishes (no RST) is noticed within
  // alive_timeout_s, not hours; a shorter outage is ridden through.
  std::string line = fmt::format(
      "ssh -T -o BatchMode=yes -o ConnectTimeout={} -o ServerAliveInterval=2 -o ServerAliveCountMax={} "
      "-o LogLevel=ERROR",
      o.connect_timeout_s, std::max(1, (o.alive_timeout_s + 1) / 2));
  for (const std::string& option : o.options) line += " -o " + shell_quote(option);
  if (o.port != 0) line += fmt::format(" -p {}", o.port);
  if (!o.username.empty()) line += " -l " + shell_quote(o.username);
  if (!o.key.empty()) line += " -i " + shell_quote(o.key);
  return line;
}

std::string ssh_command_line(const std::string& host, const SshOptions& options, const std::string& remote_command) {
  // ssh joins its arguments into one string for the login shell; quoting the
  // whole `sh -c` argument keeps it one word for bash, zsh or dash alike.
  return ssh_transport(options) + " " + shell_quote(host) + " " +
         shell_quote("exec /bin/sh -c " + shell_quote(remote_command));
}

}  // namespace tessera::launch

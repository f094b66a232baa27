#include "remote_hosts.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "parallel_commands.h"
#include "ssh.h"
#include "tessera/util/error.h"

namespace tessera::launch {
namespace {

// Exit code of the check script when something is missing; ssh itself uses
// 255 for its own failures.
constexpr int kMissing = 3;

std::string check_script(const std::string& workspace, const std::vector<std::string>& files,
                         const std::string& program, const std::vector<std::pair<int, std::string>>& ports) {
  std::string script = fmt::format(
      "cd {0} 2>/dev/null || {{ echo 'the workspace '{0}' does not exist'; exit {1}; }}\n", shell_quote(workspace),
      kMissing);
  for (const std::string& f : files)
    script += fmt::format("[ -e {0} ] || {{ echo {0}' is missing in '{1}' (tessera copy puts it there)'; exit {2}; }}\n",
                          shell_quote(f), shell_quote(workspace), kMissing);
  if (!program.empty())
    script += fmt::format(
        "command -v {0} >/dev/null 2>&1 || {{ echo 'the program '{0}' is not found in '{1}' or on the PATH'; "
        "exit {2}; }}\n",
        shell_quote(program), shell_quote(workspace), kMissing);
  // A port held by a leftover process would otherwise surface as one
  // server's bind error after everything else has started.
  for (const auto& [port, what] : ports)
    script += fmt::format(
        "if command -v ss >/dev/null 2>&1 && ss -Hltn 'sport = :{0}' | grep -q .; then "
        "echo 'port {0} ('{1}') is already in use'; exit {2}; fi\n",
        port, shell_quote(what), kMissing);
  return script;
}

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const size_t newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

}  // namespace

std::string command_program(const std::string& command) {
  size_t pos = 0;
  for (;;) {
    pos = command.find_first_not_of(" \t", pos);
    if (pos == std::string::npos) return "";
    const size_t end = std::min(command.find_first_of(" \t", pos), command.size());
    const std::string word = command.substr(pos, end - pos);
    const bool plain = std::all_of(word.begin(), word.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("/._-+=,:@").find(c) != std::string_view::npos;
    });
    if (!plain) return "";
    const size_t eq = word.find('=');
    if (eq == std::string::npos) return word;
    if (eq == 0 || word.find('/') < eq) return "";  // not an assignment
    pos = end;
  }
}

void check_remote_hosts(const std::vector<RemoteHost>& hosts, const std::string& workspace,
                        const std::vector<std::string>& files, const std::string& command, const SshOptions& ssh) {
  if (hosts.empty()) return;
  std::vector<std::string> lines;
  for (const RemoteHost& h : hosts)
    lines.push_back(ssh_command_line(h.host, ssh, check_script(workspace, files, command_program(command), h.ports)));
  // The connect timeout, plus time for a slow login.
  const std::vector<CommandOutcome> outcomes = run_in_parallel(lines, ssh.connect_timeout_s + 10);
  for (size_t i = 0; i < hosts.size(); ++i) {
    const CommandOutcome& o = outcomes[i];
    const RemoteHost& h = hosts[i];
    if (o.timed_out)
      fail("{}: host {}: no answer over ssh within {}s", h.where, h.host, ssh.connect_timeout_s + 10);
    if (o.exit_code == kMissing) fail("{}: host {}: {}", h.where, h.host, last_line(o.out));
    if (o.exit_code != 0)
      fail("{}: host {}: cannot run a command over ssh (exit code {}): {}", h.where, h.host, o.exit_code,
           o.err.empty() ? std::string("no message") : last_line(o.err));
  }
}

std::vector<std::string> sweep_remote_hosts(const std::vector<RemoteHost>& hosts, const std::string& job_id,
                                            const SshOptions& ssh) {
  if (hosts.empty()) return {};
  // The job id holds letters, digits and '-' only (job_plan.h).
  const std::string script = fmt::format(
      "for e in /proc/[0-9]*/environ; do "
      "tr '\\0' '\\n' <$e 2>/dev/null | grep -qx 'TESSERA_JOB_ID={0}' || continue; "
      "p=${{e#/proc/}}; kill -9 ${{p%/environ}} 2>/dev/null; done; "
      "rm -f /dev/shm/tessera.{0}.*",
      job_id);
  std::vector<std::string> lines;
  for (const RemoteHost& h : hosts) lines.push_back(ssh_command_line(h.host, ssh, script));
  const std::vector<CommandOutcome> outcomes = run_in_parallel(lines, ssh.connect_timeout_s + 10);
  std::vector<std::string> unreachable;
  for (size_t i = 0; i < hosts.size(); ++i)
    if (outcomes[i].exit_code != 0) unreachable.push_back(hosts[i].host);
  return unreachable;
}

}  // namespace tessera::launch

#include "remote_hosts.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "job_plan.h"
#include "parallel_commands.h"
#include "ssh.h"
#include "tessera/base/error.h"

namespace tessera::launch {
namespace {

// Exit code of the check script when something is missing; ssh itself uses
// 255 for its own failures.
constexpr int kMissing = 3;

std::string check_script(const RemoteHost& host, const std::string& program) {
  const std::string& workspace = host.workspace;
  std::string script = fmt::format(
      "cd {0} 2>/dev/null || {{ echo 'the workspace '{0}' does not exist'; exit {1}; }}\n", shell_quote(workspace),
      kMissing);
  if (!host.ip_config_text.empty())  // written whole, then renamed: never half a file
    script += fmt::format("printf %s {0} >{1}.tmp && mv {1}.tmp {1} || exit {2}\n", shell_quote(host.ip_config_text),
                          shell_quote(host.ip_config_path), kMissing);
  for (const std::string& f : host.files)
    script += fmt::format("[ -e {0} ] || {{ echo {0}' is missing in '{1}' (tessera copy puts it there)'; exit {2}; }}\n",
                          shell_quote(f), shell_quote(workspace), kMissing);
  if (!program.empty())
    script += fmt::format(
        "command -v {0} >/dev/null 2>&1 || {{ echo 'the program '{0}' is not found in '{1}' or on the PATH'; "
        "exit {2}; }}\n",
        shell_quote(program), shell_quote(workspace), kMissing);
  // A port held by a leftover process would otherwise surface as one
  // server's bind error after everything else has started.
  for (const auto& [port, what] : host.ports)
    script += fmt::format(
        "if command -v ss >/dev/null 2>&1 && ss -Hltn 'sport = :{0}' | grep -q .; then "
        "echo 'port {0} ('{1}') is already in use'; exit {2}; fi\n",
        port, shell_quote(what), kMissing);
  return script;
}

// The connect timeout, plus time for a slow login.
int answer_timeout_s(const std::vector<RemoteHost>& hosts) {
  int longest = 0;
  for (const RemoteHost& h : hosts) longest = std::max(longest, h.ssh.connect_timeout_s);
  return longest + 10;
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

void check_remote_hosts(const std::vector<RemoteHost>& hosts, const std::string& command) {
  if (hosts.empty()) return;
  std::vector<std::string> lines;
  for (const RemoteHost& h : hosts) lines.push_back(ssh_command_line(h.host, h.ssh, check_script(h, command_program(command))));
  const std::vector<CommandOutcome> outcomes = run_in_parallel(lines, answer_timeout_s(hosts));
  for (size_t i = 0; i < hosts.size(); ++i) {
    const CommandOutcome& o = outcomes[i];
    const RemoteHost& h = hosts[i];
    if (o.timed_out) fail("{}: host {}: no answer over ssh within {}s", h.where, h.host, answer_timeout_s(hosts));
    if (o.exit_code == kMissing) fail("{}: host {}: {}", h.where, h.host, last_line(o.out));
    if (o.exit_code != 0)
      fail("{}: host {}: cannot run a command over ssh (exit code {}): {}", h.where, h.host, o.exit_code,
           o.err.empty() ? std::string("no message") : last_line(o.err));
  }
}

std::vector<std::string> sweep_remote_hosts(const std::vector<RemoteHost>& hosts, const std::string& job_id) {
  if (hosts.empty()) return {};
  // The job id holds letters, digits and '-' only (job_plan.h).
  const std::string script = fmt::format(
      "for e in /proc/[0-9]*/environ; do "
      "tr '\\0' '\\n' <$e 2>/dev/null | grep -qx 'TESSERA_JOB_ID={0}' || continue; "
      "p=${{e#/proc/}}; kill -9 ${{p%/environ}} 2>/dev/null; done; "
      "rm -f /dev/shm/tessera.{0}.* {1}*",
      job_id, local_key_file(job_id));
  std::vector<std::string> lines;
  for (const RemoteHost& h : hosts) lines.push_back(ssh_command_line(h.host, h.ssh, script));
  const std::vector<CommandOutcome> outcomes = run_in_parallel(lines, answer_timeout_s(hosts));
  std::vector<std::string> unreachable;
  for (size_t i = 0; i < hosts.size(); ++i)
    if (outcomes[i].exit_code != 0) unreachable.push_back(hosts[i].host);
  return unreachable;
}

}  // namespace tessera::launch

// Remote processes: `ssh host <wrapper>`, where the wrapper (a POSIX shell
// script) runs the command in its own session on the host and ties the
// command's life to the ssh connection. When the connection's stdin reaches
// end of file (the launcher closed it to stop the job, or the launcher or its
// ssh died), the wrapper kills the command's process group, removes the job's
// shared memory on that host, and exits; nothing outlives the job there even
// when the launcher was SIGKILLed. sshd gives a command without a terminal
// no SIGHUP, so without the wrapper a remote job would live on.
//
// The job's keys travel the same channel: the launcher writes the key file's
// three lines to stdin first, and the wrapper (with shell builtins only, so
// no command line ever holds them) writes them to a 0600 file in the host's
// /dev/shm, which it removes when the command ends.
#include <utility>

#include <fmt/format.h>

#include "job_plan.h"
#include "line_relay.h"
#include "ssh.h"
#include "launch/spawner.h"
#include "tessera/base/error.h"

namespace tessera::launch {
namespace {

// Seconds the wrapper gives the command between SIGTERM and SIGKILL.
constexpr int kRemoteTermWaitTenths = 20;

std::string wrapper_script(const ProcessSpec& spec, const std::string& job_id) {
  std::string script = fmt::format(
      "cd {0} 2>/dev/null || {{ echo \"tessera launch: workspace {0} does not exist on $(hostname)\" >&2; exit 126; }}\n",
      shell_quote(spec.workdir));
  for (const std::string& name : spec.unset) script += "unset " + name + "\n";
  for (const auto& [name, value] : spec.env) script += "export " + name + "=" + shell_quote(value) + "\n";
  script += fmt::format("keyfile={}.$$\n", local_key_file(job_id));
  script +=
      "IFS= read -r k1 && IFS= read -r k2 && IFS= read -r k3 || "
      "{ echo \"tessera launch: $(hostname) got no job key on stdin\" >&2; exit 126; }\n";
  script += "( umask 077; printf '%s\\n%s\\n%s\\n' \"$k1\" \"$k2\" \"$k3\" > \"$keyfile\" ) || exit 126\n";
  script += "unset k1 k2 k3\nexport TESSERA_KEY_FILE=\"$keyfile\"\n";
  // Background jobs of a non-interactive shell read /dev/null unless told
  // otherwise: fd 3 carries ssh's stdin to the watcher.
  script += "exec 3<&0\n";
  script += "setsid /bin/sh -c " + shell_quote(spec.command) + " </dev/null &\n";
  script += "child=$!\n";
  // The watcher: once stdin ends it ignores SIGTERM, so that the exiting
  // wrapper below waits for the cleanup instead of cutting it short.
  script += fmt::format(
      "{{ while read -r _; do :; done; trap '' TERM; kill -TERM -$child 2>/dev/null; i=0; "
      "while kill -0 -$child 2>/dev/null && [ $i -lt {} ]; do sleep 0.1; i=$((i+1)); done; "
      "kill -KILL -$child 2>/dev/null; sleep 0.1; rm -f /dev/shm/tessera.{}.* \"$keyfile\"; }} <&3 >/dev/null 2>&1 &\n",
      kRemoteTermWaitTenths, job_id);
  script += "watcher=$!\nexec 3<&-\n";
  script += "wait $child\ncode=$?\n";
  // (Quietly: the shell would report the killed watcher as "Terminated".)
  script += "kill $watcher 2>/dev/null\nwait $watcher 2>/dev/null\nrm -f \"$keyfile\"\nexit $code\n";
  return script;
}

class HostSpawner : public Spawner {
 public:
  HostSpawner(Spawner& local, std::map<std::string, SshOptions> ssh, std::string job_id, std::string key_text)
      : local_(local), ssh_(std::move(ssh)), job_id_(std::move(job_id)), key_text_(std::move(key_text)) {}

  SpawnedProcess spawn(const ProcessSpec& spec) override {
    if (!spec.remote) return local_.spawn(spec);
    ProcessSpec ssh;
    ssh.host = spec.host;
    ssh.workdir = "/";
    const auto options = ssh_.find(spec.host);
    if (options == ssh_.end()) fail("no ssh settings for host {}", spec.host);  // job_plan gives every remote host some
    ssh.command = "exec " + ssh_command_line(spec.host, options->second, wrapper_script(spec, job_id_));
    ssh.stdin_pipe = true;
    SpawnedProcess process = local_.spawn(ssh);
    // Fits the pipe's buffer: never blocks. A failed write means ssh is
    // already gone, which the supervisor reports.
    write_all(process.stdin_fd, key_text_);
    return process;
  }

 private:
  Spawner& local_;
  std::map<std::string, SshOptions> ssh_;
  std::string job_id_;
  std::string key_text_;
};

}  // namespace

std::unique_ptr<Spawner> make_host_spawner(Spawner& local, std::map<std::string, SshOptions> ssh,
                                           const std::string& job_id, const std::string& key_text) {
  return std::make_unique<HostSpawner>(local, std::move(ssh), job_id, key_text);
}

}  // namespace tessera::launch

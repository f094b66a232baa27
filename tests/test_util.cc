#include "test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <random>
#include <stdexcept>
#include <chrono>
#include <thread>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <fmt/format.h>

#include "tessera/base/error.h"

namespace fs = std::filesystem;

namespace tessera::testing {

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "tessera-test-XXXXXX").string();
  path_ = mkdtemp(tmpl.data());
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string shared_data_dir() {
  for (const char* candidate : {"/../shared/data", "/../../shared/data"}) {
    fs::path p = fs::path(TESSERA_SOURCE_DIR + std::string(candidate)).lexically_normal();
    if (fs::is_directory(p)) return p.string();
  }
  return "";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

CommandResult run_command(const std::string& command_line) {
  TempDir scratch;
  const std::string out = scratch / "stdout", err = scratch / "stderr";
  const std::string cmd = command_line + " >" + out + " 2>" + err;
  CommandResult r;
  const int status = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

CommandResult run_tessera(const std::string& args) { return run_command(std::string(TESSERA_BINARY) + " " + args); }

BackgroundCommand::BackgroundCommand(const std::string& command_line, const std::string& log_path) {
  pid_ = ::fork();
  if (pid_ == 0) {
    const std::string cmd = "exec " + command_line + " >" + log_path + " 2>&1";
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
}

void expect_tessera_error(const std::string& args, const std::string& expected) {
  const CommandResult r = run_tessera(args);
  EXPECT_NE(r.exit_code, 0) << args;
  EXPECT_NE(r.err.find(expected), std::string::npos) << args << "\n" << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}

BackgroundCommand::~BackgroundCommand() {
  if (status_ < 0 && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

double test_time_scale() {
  static const double scale = [] {
    const char* text = std::getenv("TESSERA_TEST_TIME_SCALE");
    if (text == nullptr || *text == 0) return 1.0;
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (*end != 0 || !(value >= 1 && value <= 100))
      throw std::invalid_argument(fmt::format("TESSERA_TEST_TIME_SCALE={}: expected a number from 1 to 100", text));
    return value;
  }();
  return scale;
}

int BackgroundCommand::wait(double timeout_s) {
  if (status_ >= 0) return status_;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s * test_time_scale());
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return status_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

int bind_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

namespace {

// The lowest port the kernel hands out on its own (bind to port 0, or the
// source port of an outgoing connection): ip_local_port_range's first field.
int ephemeral_low() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768;
  in >> low;
  return low;
}

}  // namespace

int free_port_block(int n) {
  // Blocks are drawn below the ephemeral range: a port the kernel picked
  // there could be taken, between the check and the server's listen, by any
  // process's outgoing connection (a job's clients, a test beside this one).
  const int low = 10000, high = std::max(low + 1000, ephemeral_low());
  std::random_device seed;
  std::mt19937 rng(seed() ^ static_cast<unsigned>(::getpid()));
  std::uniform_int_distribution<int> pick(low, high - n);
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int base = pick(rng);
    bool free = true;
    for (int p = base; p < base + n && free; ++p) {
      const int probe = bind_loopback(p);
      free = probe >= 0;
      if (probe >= 0) ::close(probe);
    }
    if (free) return base;
  }
  throw std::runtime_error("no block of free ports found");
}

std::map<int, std::string> process_command_lines() {
  std::map<int, std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos || std::stoi(name) == ::getpid()) continue;
    const std::string stat = read_file(e.path().string() + "/stat");
    const size_t close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z') continue;
    std::string cmdline = read_file(e.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    out[std::stoi(name)] = cmdline;
  }
  return out;
}

std::vector<int> processes_matching(const std::string& needle) {
  std::vector<int> pids;
  for (const auto& [pid, cmdline] : process_command_lines())
    if (cmdline.find(needle) != std::string::npos) pids.push_back(pid);
  return pids;
}

int count_entries_with_prefix(const std::string& dir, const std::string& prefix) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
  return n;
}

nlohmann::json final_metrics(const std::string& out) {
  std::istringstream in(out);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  const size_t brace = last.find('{');
  if (brace == std::string::npos) return nlohmann::json();
  return nlohmann::json::parse(last.substr(brace), nullptr, false);
}

nlohmann::json final_record(const std::string& log) {
  std::istringstream lines(log);
  std::string record;
  for (std::string line; std::getline(lines, line);) {
    const size_t end = line.find("] {");
    if (line.rfind("[m0/trainer/0", 0) == 0 && end != std::string::npos) record = line.substr(end + 2);
  }
  return nlohmann::json::parse(record, nullptr, false);
}

std::vector<int> job_processes(const std::string& id, const std::string& role, int machine) {
  std::vector<int> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // The program by its first argument: a process's comm may change while
    // it runs (a library names its main thread).
    std::ifstream cmdline(entry.path() / "cmdline");
    std::string program;
    std::getline(cmdline, program, '\0');
    if (std::filesystem::path(program).filename() != "tessera") continue;
    std::ifstream env_file(entry.path() / "environ", std::ios::binary);
    const std::string env((std::istreambuf_iterator<char>(env_file)), std::istreambuf_iterator<char>());
    // environ is NUL-separated: "A=1\0B=2\0".
    const std::string padded = std::string(1, '\0') + env;
    const auto has = [&](const std::string& var) { return padded.find('\0' + var + '\0') != std::string::npos; };
    if (has("TESSERA_JOB_ID=" + id) && has("TESSERA_ROLE=" + role) &&
        has("TESSERA_MACHINE_ID=" + std::to_string(machine)))
      pids.push_back(std::stoi(name));
  }
  return pids;
}

std::string loopback_ip_config(const std::string& dir, int machines) {
  const int base = free_port_block(machines * 3);
  std::string text;
  for (int m = 0; m < machines; ++m) text += fmt::format("127.0.0.1 {}\n", base + m * 3);
  const std::string path = dir + "/ip_config.txt";
  std::ofstream(path) << text;
  return path;
}

void expect_error(const std::function<void()>& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected a tessera::Error containing '" << needle << "'";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace tessera::testing

// `tessera launch`: starts a job's servers and trainers on the machines of an
// ip_config, relays their logs, and tears everything down when the job ends
// or fails (DGL's tools/launch.py). Only machines of this host are supported
// so far; spawner.h is the seam where an ssh spawner will go.
#pragma once

#include <string>
#include <vector>

namespace tessera::launch {

struct LaunchOptions {
  std::string workspace = ".";  // the command runs here
  std::string ip_config;        // relative to the current directory
  std::string part_config;      // relative to the workspace
  int num_servers = 0;          // 0: from the ip_config's num_servers column, else 1
  int num_trainers = 1;
  int num_samplers = 0;
  std::vector<std::string> extra_envs;  // each "A=1 B=2"
  int master_port = 0;                  // 0: machine 0's base port
  int timeout_s = 60;                   // TESSERA_TIMEOUT_S for the processes
  double grace_s = 3;       // how long the others may finish after a failure
  double server_wait_s = 30;  // how long servers may take to exit after the trainers
  std::string command;      // run with /bin/sh -c in the workspace
};

// Checks everything, runs the job and cleans up; returns the launcher's exit
// code (0, the first failure's code, or 128 + signal when interrupted).
// Throws tessera::Error for problems found before any process starts.
int run_launch(const LaunchOptions& options);

}  // namespace tessera::launch

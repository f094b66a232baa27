// Scenarios of the multi-process test worker that live in their own files.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "tessera/base/error.h"
#include "tessera/distributed/context.h"

// Fails with the message unless `cond` holds (scenarios check their own results).
#define EXPECT_OR_FAIL(cond, ...)              \
  do {                                         \
    if (!(cond)) tessera::fail(__VA_ARGS__);   \
  } while (0)

// Joins the job, or runs standalone on --part-config when it is given.
inline std::unique_ptr<tessera::distributed::Context> initialize_from_flags(const std::map<std::string, std::string>& flags) {
  tessera::distributed::InitOptions init;
  if (flags.count("--part-config")) {
    init.standalone = true;
    init.part_config = flags.at("--part-config");
  }
  return tessera::distributed::initialize(init);
}

// dist_worker garbage: bad bytes and messages at a live server, which
// answers each with an error and goes on serving.
int run_garbage(const std::map<std::string, std::string>& flags);

// dist_worker sample --data DIR --out DIR [--part-config F] [--samplers N]
int run_sample(const std::map<std::string, std::string>& flags);

// dist_worker hetero-sample --data DIR (a heterogeneous dataset partitioned
// with --add-reverse) [--part-config F]
int run_hetero_sample(const std::map<std::string, std::string>& flags);

// dist_worker intrude --endpoints tcp://IP:PORT,... (a job's servers, the
// rendezvous store first): what a process without the job's key can do, run
// from another host while the job trains. For each endpoint it prints the
// greeting's security mechanism (CURVE unless the job is --insecure, or
// NULL for a trainer's secured ring, which seals every piece itself: the
// intruder pushes it a forged piece, which the trainer must drop); with no
// key, a CURVE key of its own and a wrong PLAIN token, pulls, pushes, a
// shutdown and a store write must all go unanswered (and so unexecuted).
// Prints "intruder: N attempts, M refused; K of P ports greet without CURVE"
// and exits 1 if any was answered.
int run_intrude(const std::map<std::string, std::string>& flags);

// dist_worker service: calls a service registered by the test's own file
// (service_scenario.cc) on every machine; prints "registered service
// answered by machine M" for each.
int run_service(const std::map<std::string, std::string>& flags);

// dist_worker kge-shards: 1vsAll and KvsAll steps with the entity table on
// every machine's server against the standalone step on the same tables;
// prints "kge step on the servers matches the standalone step: CASE" for each.
int run_kge_shards(const std::map<std::string, std::string>& flags);

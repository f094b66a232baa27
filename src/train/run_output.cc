#include "tessera/train/run_output.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "tessera/base/process.h"

namespace tessera::train {

run::RunLog open_run_log(distributed::Context& ctx, const std::string& out_dir, const std::string& tool,
                         const nlohmann::json& config, bool append) {
  const bool logger = ctx.rank() == 0;
  if (logger) std::filesystem::create_directories(out_dir);
  run::RunLog log(out_dir + "/metrics.jsonl", logger, append);
  if (!logger) return log;
  const std::vector<std::string> args = process_arguments();
  nlohmann::json run = run::describe_job(ctx);
  run["tool"] = tool.empty() && !args.empty() ? std::filesystem::path(args[0]).filename().string() : tool;
  run["config"] = config;
  run["out_dir"] = std::filesystem::absolute(out_dir).lexically_normal().string();
  log.describe_run(run);
  return log;
}

std::string out_dir_or_default(const std::string& given, const std::string& fallback) {
  if (!given.empty()) return given;
  const char* run_dir = std::getenv("TESSERA_RUN_DIR");
  return run_dir != nullptr && *run_dir != '\0' ? run_dir : fallback;
}

nlohmann::json to_json(const NodeTrainOptions& o) {
  return {{"graph_name", o.graph_name}, {"ip_config", o.ip_config},   {"part_config", o.part_config},
          {"standalone", o.standalone}, {"num_epochs", o.num_epochs}, {"num_hidden", o.num_hidden},
          {"num_layers", o.num_layers}, {"fanout", o.fanout.to_string()}, {"eval_fanout", o.eval_fanout.to_string()},
          {"batch_size", o.batch_size}, {"eval_batch_size", o.eval_batch_size}, {"log_every", o.log_every},
          {"eval_every", o.eval_every}, {"lr", o.lr},                 {"dropout", o.dropout},
          {"weight_decay", o.weight_decay}, {"num_samplers", o.num_samplers}, {"seed", o.seed},
          {"num_threads", o.num_threads}, {"out", o.out_dir},         {"max_batches", o.max_batches},
          {"checkpoint_every", o.checkpoint.every}, {"keep_checkpoints", o.checkpoint.keep}};
}

}  // namespace tessera::train

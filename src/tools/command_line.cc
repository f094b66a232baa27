#include "tessera/train/command_line.h"

#include <cstdio>

#include <CLI/CLI.hpp>

#include "tessera/base/error.h"
#include "tools/node_train_flags.h"

namespace tessera::train {

struct CommandLine::Parser {
  explicit Parser(const std::string& description) : app(description) {}
  CLI::App app;
};

CommandLine::CommandLine(const std::string& description) : parser_(std::make_unique<Parser>(description)) {}
CommandLine::~CommandLine() = default;

void CommandLine::add_node_train_flags(NodeTrainOptions* options, const std::string& model) {
  tools::add_node_train_flags(&parser_->app, *options, model);
}

void CommandLine::add_option(const std::string& names, int64_t* value, const std::string& help) {
  parser_->app.add_option(names, *value, help);
}
void CommandLine::add_option(const std::string& names, int* value, const std::string& help) {
  parser_->app.add_option(names, *value, help);
}
void CommandLine::add_option(const std::string& names, double* value, const std::string& help) {
  parser_->app.add_option(names, *value, help);
}
void CommandLine::add_option(const std::string& names, std::string* value, const std::string& help) {
  parser_->app.add_option(names, *value, help);
}
void CommandLine::add_flag(const std::string& names, bool* value, const std::string& help) {
  parser_->app.add_flag(names, *value, help);
}

int CommandLine::parse(int argc, char** argv) {
  try {
    parser_->app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parser_->app.exit(e);
  } catch (const Error& e) {  // a typed value's parser: the flag and what was wrong
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return -1;
}

}  // namespace tessera::train

// A training program's command line: the flags of `tessera train sage` /
// `tessera train rgcn` (NodeTrainOptions, canonical spelling first and
// DGL's spellings as aliases) plus the program's own, parsed by the same
// parsers as the `tessera` tool's (a bad value is refused naming its flag).
// For programs written on the SDK (examples/cpp); the parser library
// (CLI11) stays inside libtessera.
//
// Contract: the add_* functions register flags that write into the given
// pointers when parse() runs, so those must outlive it; defaults shown in
// --help are the pointed-to values at the call. parse() prints --help or the
// error itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tessera/train/node_train_options.h"

namespace tessera::train {

class CommandLine {
 public:
  explicit CommandLine(const std::string& description);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // The flags of `tessera train sage`; `model` names the default --out
  // (<model>-<graph name>).
  void add_node_train_flags(NodeTrainOptions* options, const std::string& model);
  // The program's own flags; `names` as "--num-heads,--num_heads".
  void add_option(const std::string& names, int64_t* value, const std::string& help);
  void add_option(const std::string& names, int* value, const std::string& help);
  void add_option(const std::string& names, double* value, const std::string& help);
  void add_option(const std::string& names, std::string* value, const std::string& help);
  void add_flag(const std::string& names, bool* value, const std::string& help);

  // Parses the command line. Returns -1 to go on, or the code to exit with
  // now: 0 after --help, non-zero after an error (both printed; a bad typed
  // value such as --fanout 10,x exits 1, as the tessera tool does).
  int parse(int argc, char** argv);

 private:
  struct Parser;
  std::unique_ptr<Parser> parser_;
};

}  // namespace tessera::train

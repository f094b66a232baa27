// The command line's typed values: each parsed once, here, by one parser
// with one error message, whichever command (or job-file key) takes it.
// Parsers throw tessera::Error naming the flag; the add_* functions register
// a CLI11 option that parses into the typed value while the command line is
// parsed, so a bad value stops the command (tessera: error: ..., exit 1)
// before any work starts.
//
// Internal header (src/tools only): CLI11 stays out of the public headers.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "tessera/sampling/fanouts.h"

namespace tessera::tools {

// "10,25" (DGL's --fan-out): entries >= -1; errors name `flag` and the bad entry.
sampling::Fanouts parse_fanouts(const std::string& text, const std::string& flag);

// An option `names` ("--fanout,--fan-out") whose value parses into `*out`.
CLI::Option* add_fanouts_option(CLI::App* cmd, const std::string& names, sampling::Fanouts* out,
                                const std::string& help);

}  // namespace tessera::tools

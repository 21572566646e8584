// Command-line handling shared by the binary's main: flag names accepted with dashes
// (--lease-ttl-ms) as well as underscores, strict checking that ends in a clear message (so that main
// can exit 2 rather than absl's 1), and a short --help over the program's own flags.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace kbench::server {

// argv with every flag name's dashes turned into underscores ("--metrics-listen=x" ->
// "--metrics_listen=x"); values and arguments after "--" are untouched.
std::vector<std::string> NormalizeFlagNames(int argc, char** argv);

// True when args (after argv[0]) ask for help: -h, --help, -help.
bool WantsHelp(const std::vector<std::string>& args);

// Checks every argument after args[0] against the registered absl flags: unknown flags, missing or
// unparsable values and positional arguments are INVALID_ARGUMENT naming the argument. Parsing a
// value sets the flag, as the absl parse that follows would.
absl::Status CheckArgs(const std::vector<std::string>& args);

// "usage: <program> [flags]\n<summary>\n\nflags:\n  --name (default) help\n..." for the named flags.
std::string Usage(const std::string& program, const std::string& summary, const std::vector<std::string>& flag_names);

}  // namespace kbench::server

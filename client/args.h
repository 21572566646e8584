// A small command-line parser for kbench-client's subcommands. Each subcommand declares its flags in
// a CommandSpec; the same spec drives parsing, error messages and the --help text, so the help can
// never drift from what is accepted.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kbench::client {

struct FlagSpec {
  std::string name;        // Without the dashes: "op" for --op.
  std::string value_name;  // "NAME" in the help; empty: a boolean flag that takes no value.
  std::string help;
  bool repeatable = false;  // May be given several times; every value is kept.
  bool comma_list = false;  // Each value is also split on commas ("--dtype f32,bf16"); implies repeatable.
};

struct CommandSpec {
  std::string name;        // "submit"
  std::string positional;  // Shown after the name in the usage line: "[JOB_ID...]"; empty: none accepted.
  std::string summary;     // One line.
  std::string details;     // Free text after the flags (exit status, notes); may be empty.
  std::vector<FlagSpec> flags;
  std::vector<std::string> examples;
};

// The outcome of parsing: values by flag name, in the order given, and the positional arguments.
class ParsedArgs {
 public:
  bool help = false;  // --help or -h was given.
  std::vector<std::string> positional;

  bool Has(absl::string_view name) const;
  // The last value given (flags that are not repeatable have at most one), or `fallback`.
  std::string Get(absl::string_view name, absl::string_view fallback = "") const;
  // Every value given, in order; empty when the flag is absent.
  const std::vector<std::string>& GetAll(absl::string_view name) const;
  // True when a boolean flag was given (and not as --flag=false).
  bool GetBool(absl::string_view name) const;
  // Numeric accessors: absent gives `fallback`; a malformed value is an error naming the flag.
  absl::StatusOr<int64_t> GetInt(absl::string_view name, int64_t fallback) const;
  absl::StatusOr<double> GetDouble(absl::string_view name, double fallback) const;

  void Add(const std::string& name, std::string value) { values_[name].push_back(std::move(value)); }

 private:
  std::map<std::string, std::vector<std::string>, std::less<>> values_;
};

// Parses `args` (the arguments after the subcommand name). Accepts --flag value, --flag=value, -h,
// and "--" to end the flags. Errors (unknown flag, missing value, repeated single flag, unexpected
// positional argument) are INVALID_ARGUMENT with a message naming the flag.
absl::StatusOr<ParsedArgs> ParseArgs(const CommandSpec& spec, const std::vector<std::string>& args);

// The full --help text of a command, as `program name [flags] positional`.
std::string Usage(absl::string_view program, const CommandSpec& spec);

}  // namespace kbench::client

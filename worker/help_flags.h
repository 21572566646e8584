// --help of the worker's programs lists the flags of their main file: absl's default looks for a
// file named after the binary (kbench-bench's flags live in bench_main.cc) and answers "No flags
// matched".
#pragma once

#include <string>

#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace kbench::worker {

// main_file: the path below the repository, e.g. "worker/bench_main.cc".
inline void HelpListsFlagsOf(absl::string_view main_file) {
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [main_file](absl::string_view file) { return absl::EndsWith(file, main_file); };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  usage.normalize_filename = [](absl::string_view file) {
    const size_t at = file.rfind("worker/");
    return std::string(at == absl::string_view::npos ? file : file.substr(at));
  };
  absl::SetFlagsUsageConfig(usage);
}

}  // namespace kbench::worker

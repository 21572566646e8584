// Command-line checks on top of absl flags' public reflection API.
#include "server/service/cli_args.h"

#include <algorithm>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace kbench::server {

std::vector<std::string> NormalizeFlagNames(int argc, char** argv) {
  std::vector<std::string> out;
  bool positional_only = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") positional_only = true;
    if (i > 0 && !positional_only && arg.size() > 1 && arg[0] == '-') {
      const size_t start = arg.find_first_not_of('-');
      const size_t end = std::min(arg.find('='), arg.size());
      if (start != std::string::npos && start < end) std::replace(arg.begin() + start, arg.begin() + end, '-', '_');
    }
    out.push_back(std::move(arg));
  }
  return out;
}

bool WantsHelp(const std::vector<std::string>& args) {
  return std::any_of(args.begin() + std::min<size_t>(1, args.size()), args.end(),
                     [](const std::string& a) { return a == "-h" || a == "--help" || a == "-help"; });
}

absl::Status CheckArgs(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      if (i + 1 < args.size()) return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", args[i + 1], "'"));
      break;
    }
    if (arg.size() < 2 || arg[0] != '-')
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", arg, "' (this program takes only flags)"));
    const std::string body = arg.substr(arg.find_first_not_of('-'));
    const size_t eq = body.find('=');
    const std::string name = body.substr(0, eq);
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr && absl::StartsWith(name, "no") && eq == std::string::npos) {
      absl::CommandLineFlag* negated = absl::FindCommandLineFlag(name.substr(2));
      if (negated != nullptr && negated->IsOfType<bool>()) continue;
    }
    if (flag == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    std::string value;
    if (eq != std::string::npos) {
      value = body.substr(eq + 1);
    } else if (flag->IsOfType<bool>()) {
      continue;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
    }
    std::string error;
    if (!flag->ParseFrom(value, &error))
      return absl::InvalidArgumentError(absl::StrCat("bad value '", value, "' for --", name, ": ", error));
  }
  return absl::OkStatus();
}

std::string Usage(const std::string& program, const std::string& summary, const std::vector<std::string>& flag_names) {
  std::string out = absl::StrCat("usage: ", program, " [flags]\n", summary, "\n\nflags (dashes or underscores):\n");
  for (const std::string& name : flag_names) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) continue;
    std::string dashed = name;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    absl::StrAppend(&out, "  --", dashed, " (default \"", flag->DefaultValue(), "\")\n      ", flag->Help(), "\n");
  }
  return out;
}

}  // namespace kbench::server

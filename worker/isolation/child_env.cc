// The scrubbed environment of child processes that run or compile job code; see child_env.h.
#include "worker/isolation/child_env.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace kbench::worker {

bool LooksLikeSecret(absl::string_view name) {
  const std::string upper = absl::AsciiStrToUpper(name);
  static constexpr absl::string_view kWords[] = {"TOKEN", "SECRET", "PASSW", "PASSPHRASE", "CREDENTIAL", "AUTH",
                                                 "PRIVATE", "APIKEY", "API_KEY", "COOKIE", "SESSION", "CERT"};
  for (absl::string_view w : kWords)
    if (absl::StrContains(upper, w)) return true;
  // KEY as a word: KBENCH_TLS_KEY, SSH_KEY_PATH; not MONKEY or KEYBOARD-like names.
  return upper == "KEY" || absl::EndsWith(upper, "_KEY") || absl::StrContains(upper, "_KEY_") ||
         absl::StartsWith(upper, "KEY_");
}

bool IsAllowedChildEnvName(absl::string_view name) {
  if (name.empty() || LooksLikeSecret(name)) return false;
  static constexpr absl::string_view kExact[] = {
      "PATH", "LANG", "LANGUAGE", "TZ", "TMPDIR", "LD_LIBRARY_PATH",
      // What the runner reads (grep getenv in worker/, kernels/): NVRTC's path, the kernel cache, Triton's Python.
      "KBENCH_NVRTC", "KBENCH_KERNEL_CACHE", "KBENCH_PYTHON",
      // Coverage builds write their counters from the child too.
      "GCOV_PREFIX", "GCOV_PREFIX_STRIP", "LLVM_PROFILE_FILE"};
  if (std::find(std::begin(kExact), std::end(kExact), name) != std::end(kExact)) return true;
  // The device (CUDA_VISIBLE_DEVICES, CUDA_CACHE_PATH, CUDA_HOME, NVIDIA_VISIBLE_DEVICES, ...) and locale.
  for (absl::string_view prefix : {"CUDA_", "NVIDIA_", "LC_"})
    if (absl::StartsWith(name, prefix)) return true;
  // Sanitizer builds (ASAN_OPTIONS, UBSAN_OPTIONS, ..., ASAN_SYMBOLIZER_PATH).
  return absl::EndsWith(name, "SAN_OPTIONS") || absl::EndsWith(name, "_SYMBOLIZER_PATH");
}

std::vector<std::string> BuildChildEnvironment(char* const* parent, const ChildEnvOptions& options) {
  std::vector<std::string> out;
  auto name_of = [](absl::string_view entry) { return entry.substr(0, entry.find('=')); };
  auto overridden = [&](absl::string_view name) {
    if (!options.home.empty() && (name == "HOME" || name == "PWD")) return true;
    return std::any_of(options.set.begin(), options.set.end(), [&](const auto& kv) { return kv.first == name; });
  };
  for (char* const* e = parent; e != nullptr && *e != nullptr; ++e) {
    const absl::string_view entry(*e);
    if (entry.find('=') == absl::string_view::npos) continue;
    const absl::string_view name = name_of(entry);
    if (IsAllowedChildEnvName(name) && !overridden(name)) out.emplace_back(entry);
  }
  for (const auto& [name, value] : options.set)
    if (IsAllowedChildEnvName(name)) out.push_back(absl::StrCat(name, "=", value));
  if (!options.home.empty()) {
    out.push_back(absl::StrCat("HOME=", options.home));
    out.push_back(absl::StrCat("PWD=", options.home));
  }
  return out;
}

std::vector<char*> EnvironmentPointers(std::vector<std::string>& entries) {
  std::vector<char*> p;
  p.reserve(entries.size() + 1);
  for (std::string& e : entries) p.push_back(e.data());
  p.push_back(nullptr);
  return p;
}

void ScrubOwnSecrets() {
  std::vector<std::string> names;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    char* eq = std::strchr(*e, '=');
    if (eq == nullptr || !LooksLikeSecret(absl::string_view(*e, static_cast<size_t>(eq - *e)))) continue;
    names.emplace_back(*e, static_cast<size_t>(eq - *e));
    std::memset(eq + 1, 0, std::strlen(eq + 1));
  }
  for (const std::string& name : names) unsetenv(name.c_str());
}

std::string MakePrivateDir(absl::string_view what) {
  const char* tmp = getenv("TMPDIR");
  std::string pattern = absl::StrCat(tmp && *tmp == '/' ? tmp : "/tmp", "/kbench-", what, "-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) return "";
  chmod(pattern.c_str(), 0700);
  return pattern;
}

void RemovePrivateDir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace kbench::worker

// Resolution of the coordinator address and token; see connection.h.
#include "client/connection.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace kbench::client {
namespace {

// An unset or empty variable counts as absent: `KBENCH_TOKEN= kbench-client ...` should not
// override a token from the config file with nothing.
std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

}  // namespace

absl::StatusOr<ConfigFile> ParseConfig(absl::string_view text, absl::string_view origin) {
  ConfigFile out;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    // '#' starts a comment at the start of a line or after a blank, so a token may contain '#'.
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
        line = line.substr(0, i);
        break;
      }
    }
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    size_t eq = line.find('=');
    if (eq == absl::string_view::npos)
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ":", line_no, ": expected 'key = value', got '", line, "'"));
    absl::string_view key = absl::StripAsciiWhitespace(line.substr(0, eq));
    std::string value(absl::StripAsciiWhitespace(line.substr(eq + 1)));
    if (key == "coordinator") {
      out.coordinator = value;
    } else if (key == "token") {
      out.token = value;
    } else if (key == "tls_ca") {
      out.tls_ca = value;
    } else if (key == "tls_cert") {
      out.tls_cert = value;
    } else if (key == "tls_key") {
      out.tls_key = value;
    } else {
      // Strict on purpose: a misspelt key would otherwise silently fall back to the default address.
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ":", line_no, ": unknown key '", key,
                       "' (known: coordinator, token, tls_ca, tls_cert, tls_key)"));
    }
  }
  return out;
}

ConfigPath FindConfigPath(const ConnectionFlags& flags) {
  if (flags.config) return {*flags.config, true};
  if (auto env = Env("KBENCH_CONFIG")) return {*env, true};
  if (auto home = Env("HOME")) return {absl::StrCat(*home, "/.config/kbench/client.conf"), false};
  return {"", false};
}

absl::StatusOr<api::ChannelOptions> ResolveConnection(const ConnectionFlags& flags) {
  ConfigFile file;
  ConfigPath path = FindConfigPath(flags);
  if (!path.path.empty()) {
    std::ifstream in(path.path);
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      auto parsed = ParseConfig(text.str(), path.path);
      if (!parsed.ok()) return parsed.status();
      file = *parsed;
    } else if (path.explicit_path) {
      return absl::NotFoundError(absl::StrCat("config file '", path.path, "' cannot be read"));
    }
  }
  api::ChannelOptions out;
  if (flags.coordinator)
    out.address = *flags.coordinator;
  else if (auto env = Env("KBENCH_COORDINATOR"))
    out.address = *env;
  else if (file.coordinator)
    out.address = *file.coordinator;
  else
    out.address = kDefaultCoordinator;
  if (flags.token)
    out.token = *flags.token;
  else if (auto env = Env("KBENCH_TOKEN"))
    out.token = *env;
  else if (file.token)
    out.token = *file.token;
  // TLS files: each from its flag, else the environment, else the config file.
  for (auto [flag, env, from_file, field] :
       {std::tuple{&flags.tls_ca, "KBENCH_TLS_CA", &file.tls_ca, &out.tls_ca_path},
        std::tuple{&flags.tls_cert, "KBENCH_TLS_CERT", &file.tls_cert, &out.tls_cert_path},
        std::tuple{&flags.tls_key, "KBENCH_TLS_KEY", &file.tls_key, &out.tls_key_path}}) {
    if (*flag)
      *field = **flag;
    else if (auto value = Env(env))
      *field = *value;
    else if (*from_file)
      *field = **from_file;
  }
  if (out.address.empty()) return absl::InvalidArgumentError("coordinator address is empty");
  return out;
}

}  // namespace kbench::client

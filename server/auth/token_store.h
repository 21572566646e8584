// Bearer tokens of the coordinator and their roles, from a token file (--token-file). One token a
// line:
//
//   # comment
//   TOKEN ROLE[,ROLE] [NAME]
//
// ROLE is submit (Submit, CancelJob), worker (the worker rpcs), plugin (UploadPlugin: kernel code the
// fleet will run) or admin (everything); any valid token may read. TOKEN is an RFC 6750 b64token ([A-Za-z0-9-._~+/]+ then '='s) of at least 16 characters;
// NAME (default FILE:LINE) names the token in messages. Malformed lines, unknown roles, duplicate
// tokens and a file without tokens are errors naming the file and line; messages never echo a token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kbench::server::auth {

// kPlugin: may upload kernel plugins (code that workers will run), which submit alone may not.
enum class Role : uint8_t { kSubmit = 1 << 0, kWorker = 1 << 1, kAdmin = 1 << 2, kPlugin = 1 << 3 };

// A set of roles.
class RoleSet {
 public:
  RoleSet() = default;
  RoleSet(std::initializer_list<Role> roles) {
    for (Role r : roles) Add(r);
  }
  void Add(Role r) { bits_ |= static_cast<uint8_t>(r); }
  bool Has(Role r) const { return (bits_ & static_cast<uint8_t>(r)) != 0; }
  bool empty() const { return bits_ == 0; }
  bool operator==(const RoleSet&) const = default;
  // "submit,worker" (in the order submit, worker, admin, plugin).
  std::string ToString() const;

 private:
  uint8_t bits_ = 0;
};

// "submit", "worker", "admin", "plugin"; nullopt for anything else.
std::optional<Role> ParseRole(absl::string_view name);
absl::string_view RoleName(Role r);

inline constexpr size_t kMinTokenLength = 16;

struct TokenEntry {
  std::string token;
  RoleSet roles;
  std::string name;  // From the file, else "FILE:LINE".
  int line = 0;
};

class TokenStore {
 public:
  // Parses a token file's text; `origin` (the path) prefixes error messages: "tokens:3: ...".
  static absl::StatusOr<TokenStore> Parse(absl::string_view text, absl::string_view origin);
  // Reads and parses the file; INVALID_ARGUMENT when it cannot be read.
  static absl::StatusOr<TokenStore> Load(const std::string& path);

  // The index of the entry holding `token`. Every entry is compared, each in time independent of
  // where the strings differ, so that timing tells nothing about a token's content.
  std::optional<size_t> Find(absl::string_view token) const;

  const TokenEntry& entry(size_t i) const { return entries_[i]; }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<TokenEntry> entries_;
};

// a == b, in time that depends on the lengths only, not on the contents.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

}  // namespace kbench::server::auth

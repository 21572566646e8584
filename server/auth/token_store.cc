// Token file parsing and constant-time lookup; see token_store.h.
#include "server/auth/token_store.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace kbench::server::auth {
namespace {

constexpr Role kAllRoles[] = {Role::kSubmit, Role::kWorker, Role::kAdmin, Role::kPlugin};

// RFC 6750: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
bool IsB64Token(absl::string_view s) {
  size_t i = 0;
  while (i < s.size() && (absl::ascii_isalnum(static_cast<unsigned char>(s[i])) ||
                          absl::string_view("-._~+/").find(s[i]) != absl::string_view::npos))
    ++i;
  if (i == 0) return false;
  while (i < s.size() && s[i] == '=') ++i;
  return i == s.size();
}

// The line without its comment: '#' at the start or after a blank starts one.
absl::string_view StripComment(absl::string_view line) {
  for (size_t i = 0; i < line.size(); ++i)
    if (line[i] == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) return line.substr(0, i);
  return line;
}

}  // namespace

std::string RoleSet::ToString() const {
  std::string out;
  for (Role r : kAllRoles)
    if (Has(r)) absl::StrAppend(&out, out.empty() ? "" : ",", RoleName(r));
  return out;
}

std::optional<Role> ParseRole(absl::string_view name) {
  for (Role r : kAllRoles)
    if (name == RoleName(r)) return r;
  return std::nullopt;
}

absl::string_view RoleName(Role r) {
  switch (r) {
    case Role::kSubmit:
      return "submit";
    case Role::kWorker:
      return "worker";
    case Role::kAdmin:
      return "admin";
    case Role::kPlugin:
      return "plugin";
  }
  return "?";
}

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  // Every byte up to the longer length is visited, whatever the contents; no early exit.
  const size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

absl::StatusOr<TokenStore> TokenStore::Parse(absl::string_view text, absl::string_view origin) {
  TokenStore store;
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_no;
    const absl::string_view line = absl::StripAsciiWhitespace(StripComment(raw));
    if (line.empty()) continue;
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ":", line_no, ": ", what));
    };
    std::vector<absl::string_view> fields = absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.size() < 2 || fields.size() > 3)
      return error(absl::StrCat("expected 'TOKEN ROLE[,ROLE] [NAME]', got ", fields.size(), " field",
                                fields.size() == 1 ? "" : "s"));
    TokenEntry entry;
    entry.token = std::string(fields[0]);
    entry.line = line_no;
    if (!IsB64Token(entry.token))
      return error("the token has a character outside [A-Za-z0-9-._~+/] (then '='s), which HTTP headers cannot carry");
    if (entry.token.size() < kMinTokenLength)
      return error(absl::StrCat("the token is ", entry.token.size(), " characters; at least ", kMinTokenLength,
                                " are required (e.g. `openssl rand -hex 32`)"));
    for (absl::string_view role : absl::StrSplit(fields[1], ',')) {
      std::optional<Role> r = ParseRole(role);
      if (!r) return error(absl::StrCat("unknown role '", role, "' (known: submit, worker, admin, plugin)"));
      entry.roles.Add(*r);
    }
    entry.name = fields.size() == 3 ? std::string(fields[2]) : absl::StrCat(origin, ":", line_no);
    for (const TokenEntry& other : store.entries_)
      if (other.token == entry.token) return error(absl::StrCat("duplicate token (first on line ", other.line, ")"));
    store.entries_.push_back(std::move(entry));
  }
  if (store.entries_.empty())
    return absl::InvalidArgumentError(absl::StrCat(origin, ": no tokens (lines 'TOKEN ROLE[,ROLE] [NAME]')"));
  return store;
}

absl::StatusOr<TokenStore> TokenStore::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::InvalidArgumentError(absl::StrCat("--token-file: cannot read '", path, "': ", std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

std::optional<size_t> TokenStore::Find(absl::string_view token) const {
  std::optional<size_t> found;
  for (size_t i = 0; i < entries_.size(); ++i) {
    // No break: every entry costs the same whether or not an earlier one matched.
    if (ConstantTimeEquals(entries_[i].token, token)) found = i;
  }
  return found;
}

}  // namespace kbench::server::auth

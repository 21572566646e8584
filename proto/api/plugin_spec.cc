// Validation of a JobSpec's plugin and A/B fields; see plugin_spec.h.
#include "api/plugin_spec.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/bounds.h"
#include "api/quote.h"

namespace kbench::api {
namespace {

absl::Status CheckHash(absl::string_view field, const std::string& sha) {
  if (sha.empty() || IsSha256Hex(sha)) return absl::OkStatus();
  return Invalid(field, absl::StrCat(Quote(sha), " is not a SHA-256 (64 lower-case hex digits)"));
}

}  // namespace

bool IsSha256Hex(absl::string_view s) {
  return s.size() == 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

absl::Status ValidatePluginFields(const v1::JobSpec& spec) {
  if (absl::Status s = CheckHash("spec.plugin_sha256", spec.plugin_sha256()); !s.ok()) return s;
  if (!spec.has_ab()) return absl::OkStatus();
  const v1::AbSpec& ab = spec.ab();
  if (!spec.plugin_sha256().empty())
    return Invalid("spec.plugin_sha256", "not with spec.ab: name the plugins in ab.base_plugin_sha256 and ab.head_plugin_sha256");
  if (absl::Status s = CheckHash("spec.ab.base_plugin_sha256", ab.base_plugin_sha256()); !s.ok()) return s;
  if (absl::Status s = CheckHash("spec.ab.head_plugin_sha256", ab.head_plugin_sha256()); !s.ok()) return s;
  if (ab.rounds() < 0 || ab.rounds() > kMaxAbRounds)
    return Invalid("spec.ab.rounds", absl::StrCat("must be in [0, ", kMaxAbRounds, "], got ", ab.rounds()));
  if (ab.pairs_size() > kMaxAbPairs) return Invalid("spec.ab.pairs", absl::StrCat("at most ", kMaxAbPairs, " pairs"));
  if (ab.pairs_size() > 0 && spec.op().empty())
    return Invalid("spec.ab.pairs", "variant pairs need spec.op (the op they belong to)");
  if (ab.pairs_size() > 0 && spec.variants_size() > 0)
    return Invalid("spec.variants", "not with spec.ab.pairs: the pairs name the variants");
  for (int i = 0; i < ab.pairs_size(); ++i) {
    if (ab.pairs(i).base_variant().empty() || ab.pairs(i).head_variant().empty())
      return Invalid(absl::StrCat("spec.ab.pairs[", i, "]"), "needs base_variant and head_variant");
    KBENCH_RETURN_IF_ERROR(CheckSize(At("spec.ab.pairs", i) + ".base_variant", ab.pairs(i).base_variant(), kMaxNameBytes));
    KBENCH_RETURN_IF_ERROR(CheckSize(At("spec.ab.pairs", i) + ".head_variant", ab.pairs(i).head_variant(), kMaxNameBytes));
  }
  return absl::OkStatus();
}

bool NeedsPluginPlanning(const v1::JobSpec& spec) { return spec.has_ab() || !spec.plugin_sha256().empty(); }

std::vector<std::string> PluginHashes(const v1::JobSpec& spec) {
  std::vector<std::string> out;
  for (const std::string* h : {&spec.ab().base_plugin_sha256(), &spec.ab().head_plugin_sha256(), &spec.plugin_sha256()})
    if (!h->empty() && std::find(out.begin(), out.end(), *h) == out.end()) out.push_back(*h);
  return out;
}

int AbRounds(const v1::AbSpec& ab) { return ab.rounds() > 0 ? ab.rounds() : kDefaultAbRounds; }

}  // namespace kbench::api

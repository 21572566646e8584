// The field checks' building blocks; see bounds.h.
#include "api/bounds.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "api/quote.h"

namespace kbench::api {

absl::Status Invalid(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

std::string At(absl::string_view field, int index) { return absl::StrCat(field, "[", index, "]"); }

absl::Status CheckSize(absl::string_view field, absl::string_view value, size_t max_bytes) {
  if (value.size() <= max_bytes) return absl::OkStatus();
  return Invalid(field, absl::StrCat(Quote(value, kMaxQuoteBytes), " is more than the limit of ", max_bytes, " bytes"));
}

absl::Status CheckRequired(absl::string_view field, absl::string_view value, size_t max_bytes) {
  if (value.empty()) return Invalid(field, "required");
  return CheckSize(field, value, max_bytes);
}

absl::Status CheckCount(absl::string_view field, int64_t count, int64_t max) {
  if (count <= max) return absl::OkStatus();
  return Invalid(field, absl::StrCat(count, " entries, more than the limit of ", max));
}

absl::Status CheckLabels(absl::string_view field, const google::protobuf::Map<std::string, std::string>& labels) {
  if (absl::Status s = CheckCount(field, static_cast<int64_t>(labels.size()), kMaxLabels); !s.ok()) return s;
  for (const auto& [key, value] : labels) {
    const std::string entry = MapEntryPath(field, key);
    if (key.empty()) return Invalid(entry, "empty label key");
    if (key.size() > kMaxLabelKeyBytes)
      return Invalid(entry, absl::StrCat("key of ", key.size(), " bytes, more than the limit of ", kMaxLabelKeyBytes));
    if (value.size() > kMaxLabelValueBytes)
      return Invalid(entry, absl::StrCat("value ", Quote(value), " is more than the limit of ", kMaxLabelValueBytes,
                                         " bytes"));
  }
  return absl::OkStatus();
}

absl::Status CheckFinite(absl::string_view field, double value, double lo, double hi) {
  if (std::isfinite(value) && value >= lo && value <= hi) return absl::OkStatus();
  if (!std::isfinite(value)) return Invalid(field, absl::StrCat("must be a finite number, got ", value));
  return Invalid(field, absl::StrCat("must be in [", lo, ", ", hi, "], got ", value));
}

absl::Status CheckRange(absl::string_view field, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return absl::OkStatus();
  return Invalid(field, absl::StrCat("must be in [", lo, ", ", hi, "], got ", value));
}

absl::Status CheckEnum(absl::string_view field, int value, bool (*is_valid)(int)) {
  if (is_valid(value)) return absl::OkStatus();
  return Invalid(field, absl::StrCat("unknown value ", value));
}

}  // namespace kbench::api

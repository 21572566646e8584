// The building blocks of the API's field checks: sizes of strings, counts of repeated fields and
// maps, labels, numbers that must be finite or in range, enums that must be known. Each returns
// INVALID_ARGUMENT naming the field path and quoting at most a short prefix of the value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"
#include "api/limits.h"

// Returns the status of expr when it is not OK.
#define KBENCH_RETURN_IF_ERROR(expr)                     \
  do {                                                   \
    if (absl::Status _s = (expr); !_s.ok()) return _s;   \
  } while (0)

namespace kbench::api {

// "field: what".
absl::Status Invalid(absl::string_view field, absl::string_view what);

// At most max_bytes.
absl::Status CheckSize(absl::string_view field, absl::string_view value, size_t max_bytes);
// Non-empty and at most max_bytes.
absl::Status CheckRequired(absl::string_view field, absl::string_view value, size_t max_bytes);
// At most max entries.
absl::Status CheckCount(absl::string_view field, int64_t count, int64_t max);
// At most kMaxLabels pairs, keys 1..kMaxLabelKeyBytes, values up to kMaxLabelValueBytes.
absl::Status CheckLabels(absl::string_view field, const google::protobuf::Map<std::string, std::string>& labels);
// Finite and within [lo, hi].
absl::Status CheckFinite(absl::string_view field, double value, double lo, double hi);
// Within [lo, hi].
absl::Status CheckRange(absl::string_view field, int64_t value, int64_t lo, int64_t hi);
// A value of the enum (is_valid is the generated <Enum>_IsValid).
absl::Status CheckEnum(absl::string_view field, int value, bool (*is_valid)(int));
// Each string of a repeated field within the count and size limits (non-empty when required).
template <typename Repeated>
absl::Status CheckStrings(absl::string_view field, const Repeated& values, int max_count, size_t max_bytes,
                          bool required);
// Each enum of a repeated field known (and not 0 when required), within the count limit.
template <typename Repeated>
absl::Status CheckEnums(absl::string_view field, const Repeated& values, int max_count, bool (*is_valid)(int),
                        bool required);

// A field path with an index: "field[i]".
std::string At(absl::string_view field, int index);

template <typename Repeated>
absl::Status CheckStrings(absl::string_view field, const Repeated& values, int max_count, size_t max_bytes,
                          bool required) {
  if (absl::Status s = CheckCount(field, values.size(), max_count); !s.ok()) return s;
  for (int i = 0; i < values.size(); ++i) {
    absl::Status s = required ? CheckRequired(At(field, i), values.Get(i), max_bytes)
                              : CheckSize(At(field, i), values.Get(i), max_bytes);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

template <typename Repeated>
absl::Status CheckEnums(absl::string_view field, const Repeated& values, int max_count, bool (*is_valid)(int),
                        bool required) {
  if (absl::Status s = CheckCount(field, values.size(), max_count); !s.ok()) return s;
  for (int i = 0; i < values.size(); ++i) {
    if (absl::Status s = CheckEnum(At(field, i), values.Get(i), is_valid); !s.ok()) return s;
    if (required && values.Get(i) == 0) return Invalid(At(field, i), "unspecified");
  }
  return absl::OkStatus();
}

}  // namespace kbench::api

// The plugin and A/B fields of a JobSpec (kbench/v1/plugin.proto): their validation, shared by the
// coordinator and the worker, and the questions both ask of a spec.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "api/limits.h"
#include "kbench/v1/job.pb.h"

namespace kbench::api {

// The limits (kMaxAbRounds, kMaxAbPairs, ...) are in api/limits.h.

// 64 lower-case hex digits.
bool IsSha256Hex(absl::string_view s);

// Checks spec.ab and spec.plugin_sha256: hashes well-formed, the two not combined, pairs named,
// rounds in range. INVALID_ARGUMENT naming the field.
absl::Status ValidatePluginFields(const v1::JobSpec& spec);

// True when the job needs a kernel library other than the worker's own: a plugin or an A/B job.
// Such a job is planned against the catalog its runner reports, not the worker's registered one.
bool NeedsPluginPlanning(const v1::JobSpec& spec);

// Every plugin hash the spec names (base, head, plugin_sha256), without duplicates.
std::vector<std::string> PluginHashes(const v1::JobSpec& spec);

// The A/B rounds with the default applied.
int AbRounds(const v1::AbSpec& ab);

}  // namespace kbench::api

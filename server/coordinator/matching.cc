// Selector matching. Empty selector fields match anything.
#include "server/coordinator/matching.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/custom_spec.h"
#include "api/plugin_spec.h"
#include "api/quote.h"

namespace kbench::server {

bool DeviceMatches(const v1::GpuSelector& selector, const v1::DeviceInfo& device) {
  if (selector.backend() != v1::BACKEND_UNSPECIFIED && selector.backend() != device.backend()) return false;
  if (!selector.model().empty() &&
      !absl::StrContains(absl::AsciiStrToLower(device.name()), absl::AsciiStrToLower(selector.model())))
    return false;
  const int cc = device.compute_capability_major() * 10 + device.compute_capability_minor();
  return cc >= selector.min_compute_capability();
}

bool WorkerMatches(const v1::GpuSelector& selector, const v1::WorkerInfo& worker) {
  for (const auto& [key, value] : selector.labels()) {
    auto it = worker.labels().find(key);
    if (it == worker.labels().end() || it->second != value) return false;
  }
  return std::any_of(worker.devices().begin(), worker.devices().end(),
                     [&](const v1::DeviceInfo& d) { return DeviceMatches(selector, d); });
}

int64_t MaxMatchingMemoryBytes(const v1::GpuSelector& selector, const std::vector<const v1::WorkerInfo*>& workers) {
  int64_t best = 0;
  for (const v1::WorkerInfo* w : workers) {
    if (!WorkerMatches(selector, *w)) continue;
    for (const auto& d : w->devices())
      if (DeviceMatches(selector, d)) best = std::max(best, d.memory_bytes());
  }
  return best;
}

bool WorkerCanRun(const v1::WorkerInfo& worker, const v1::JobSpec& spec) {
  if (!WorkerMatches(spec.selector(), worker)) return false;
  // A plugin brings its own ops (and an A/B job without op takes those both sides have): the worker
  // plans it against the catalogs its runner reports (worker/plan/planner.h).
  if (api::NeedsPluginPlanning(spec) && (!api::PluginHashes(spec).empty() || spec.op().empty())) return true;
  auto op = std::find_if(worker.catalog().begin(), worker.catalog().end(),
                         [&](const v1::OpInfo& o) { return o.name() == spec.op(); });
  if (op == worker.catalog().end()) return false;
  // Custom kernels need the op's launch contract, which only workers that run them advertise.
  if (!spec.custom_variants().empty() && !op->has_contract()) return false;
  return std::all_of(spec.variants().begin(), spec.variants().end(), [&](const std::string& name) {
    if (api::IsCustomVariantName(name)) return true;  // the job brings it
    return std::any_of(op->variants().begin(), op->variants().end(),
                       [&](const v1::VariantInfo& v) { return v.name() == name; });
  });
}

absl::StatusOr<v1::WorkerInfo> WithOnlyDevice(const v1::WorkerInfo& worker, absl::string_view device_uuid) {
  auto device = std::find_if(worker.devices().begin(), worker.devices().end(),
                             [&](const v1::DeviceInfo& d) { return d.uuid() == device_uuid; });
  if (device == worker.devices().end())
    return absl::InvalidArgumentError(absl::StrCat("device_uuid: worker '", worker.worker_id(),
                                                   "' registered no device ", api::Quote(device_uuid)));
  v1::WorkerInfo one = worker;
  one.clear_devices();
  one.clear_calibrations();
  *one.add_devices() = *device;
  for (const v1::Calibration& c : worker.calibrations())
    if (c.device_uuid() == device_uuid) *one.add_calibrations() = c;
  return one;
}

}  // namespace kbench::server

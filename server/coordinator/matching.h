// Which workers a job's GpuSelector admits, and which queued jobs a worker can run.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/worker.pb.h"

namespace kbench::server {

// Backend equal (or unspecified), model a case-insensitive substring of the device name, compute
// capability (major * 10 + minor) at least the minimum.
bool DeviceMatches(const v1::GpuSelector& selector, const v1::DeviceInfo& device);

// Every selector label among the worker's labels, and at least one device matching.
bool WorkerMatches(const v1::GpuSelector& selector, const v1::WorkerInfo& worker);

// The largest memory_bytes over the devices that match the selector, on workers that match it.
int64_t MaxMatchingMemoryBytes(const v1::GpuSelector& selector, const std::vector<const v1::WorkerInfo*>& workers);

// The worker matches the spec's selector and its catalog has the op and every variant the spec names
// (custom ones, "custom:<name>", come with the job); with custom variants, the op's launch contract.
bool WorkerCanRun(const v1::WorkerInfo& worker, const v1::JobSpec& spec);

// The worker narrowed to its device `device_uuid` (and that device's calibration), for matching a
// lease that one device asks for. INVALID_ARGUMENT when the worker has no such device.
absl::StatusOr<v1::WorkerInfo> WithOnlyDevice(const v1::WorkerInfo& worker, absl::string_view device_uuid);

}  // namespace kbench::server

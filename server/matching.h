// Which workers a job's GpuSelector admits, and which queued jobs a worker can run.
#pragma once

#include <cstdint>
#include <vector>

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

// The worker matches the spec's selector and its catalog has the op and every variant the spec names.
bool WorkerCanRun(const v1::WorkerInfo& worker, const v1::JobSpec& spec);

}  // namespace kbench::server

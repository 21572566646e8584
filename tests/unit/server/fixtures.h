// Test data for the coordinator tests: a small rmsnorm op, workers that advertise it, job specs,
// results with samples, and a temporary database path.
#pragma once

#include <string>

#include "kbench/v1/catalog.pb.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "kbench/v1/worker.pb.h"

namespace kbench::server::testing {

// rmsnorm{rows, cols} f32/bf16 with variants cpu_naive and cpu_blocked, presets small and edge.
v1::OpInfo RmsnormOp();
// vector_add{n} f32 with variant cpu_naive.
v1::OpInfo VectorAddOp();

// A worker with one device and the given catalog (RmsnormOp() when none is added by the caller).
v1::WorkerInfo CpuWorker(const std::string& name, int64_t memory_bytes = int64_t{64} << 30);
v1::WorkerInfo CudaWorker(const std::string& name, const std::string& device_name, int cc_major, int cc_minor,
                          int64_t memory_bytes);

// rmsnorm on an explicit shape "rows x cols" (positional), no selector.
v1::JobSpec RmsnormSpec(int64_t rows = 64, int64_t cols = 1024);

// An OK result with timing and n samples.
v1::Result OkResult(int index, int samples = 5);

// A fresh database file path under the test's temporary directory.
std::string TempDbPath();

}  // namespace kbench::server::testing

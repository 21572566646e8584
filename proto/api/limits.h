// The API's limits in one place: every string, map and repeated field that a client or a worker
// sends has a size or count limit here, checked by api/bounds.h, api/validate.h, api/custom_spec.h
// and api/plugin_spec.h, and stated in the .proto comments (the proto is the spec). Keep the three
// in step: tests/unit/proto/limits_test.cc tries each limit at and one past its value.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kbench::api {

// Strings.
inline constexpr size_t kMaxNameBytes = 128;            // Op, variant, preset, dim, flag, tensor and param names.
inline constexpr size_t kMaxIdBytes = 128;              // Job, lease and worker ids; device uuids.
inline constexpr size_t kMaxIdempotencyKeyBytes = 256;
inline constexpr size_t kMaxShortTextBytes = 1024;      // Device names, versions, addresses, selector model, ...
inline constexpr size_t kMaxTextBytes = 16 * 1024;      // Descriptions, notes, progress.current.
inline constexpr size_t kMaxLogBytes = 64 * 1024;       // A result's status_message and compile_log; a job's error.
inline constexpr size_t kMaxTemplateSourceBytes = 256 * 1024;  // A launch contract's template_source.

// Labels (job, selector, worker and result labels alike).
inline constexpr int kMaxLabels = 64;
inline constexpr size_t kMaxLabelKeyBytes = 64;
inline constexpr size_t kMaxLabelValueBytes = 256;

// A job.
inline constexpr int kMaxVariantsPerJob = 256;
inline constexpr int kMaxProblemsPerJob = 256;
inline constexpr int kMaxDimsPerProblem = 16;  // paged_decode has 9; room for more
inline constexpr int kMaxFlagsPerProblem = 16;
inline constexpr int kMaxDtypesPerJob = 16;
inline constexpr int64_t kMaxSamples = 1'000'000;
inline constexpr int64_t kMaxTimePerProblemNs = 3'600'000'000'000;  // 1 hour
inline constexpr int kMaxCorrectnessTrials = 100;
inline constexpr int kMaxHotBatch = 100'000;

// A job's custom kernels (custom.proto).
inline constexpr int64_t kMaxCustomSourceBytes = int64_t{1} << 20;       // One variant's source.
inline constexpr int64_t kMaxCustomSourceTotalBytes = int64_t{4} << 20;  // All of a job's sources.
inline constexpr int kMaxCustomVariantsPerJob = 8;
inline constexpr int kMaxCustomNameBytes = 64;
inline constexpr size_t kMaxCustomFileNameBytes = 255;
inline constexpr size_t kMaxGridExprBytes = 256;
inline constexpr int kMaxCompileOptions = 32;
inline constexpr size_t kMaxCompileOptionBytes = 256;
inline constexpr int64_t kDefaultCompileTimeoutNs = 60'000'000'000;
inline constexpr int64_t kMaxCompileTimeoutNs = 600'000'000'000;
inline constexpr int64_t kMaxDynamicSharedBytes = 227 * 1024;  // The most any device gives a block.
inline constexpr int kMaxBlockThreads = 1024;

// A/B jobs (plugin.proto).
inline constexpr int kDefaultAbRounds = 6;
inline constexpr int kMaxAbRounds = 100;
inline constexpr int kMaxAbPairs = 256;

// A worker's registration (worker.proto, device.proto, catalog.proto).
inline constexpr int kMaxDevicesPerWorker = 64;
inline constexpr int kMaxCalibrationPeaks = 16;         // Entries of peak_flops_per_second.
inline constexpr int kMaxCatalogOps = 512;
inline constexpr int kMaxVariantsPerOp = 512;
inline constexpr int kMaxPresetsPerOp = 64;
inline constexpr int kMaxProblemsPerPreset = 1024;
inline constexpr int kMaxTensorsPerOp = 64;
inline constexpr int kMaxFlagsPerOp = 64;
inline constexpr int kMaxContractParams = 128;
inline constexpr size_t kMaxWorkerInfoBytes = size_t{8} << 20;  // The whole WorkerInfo, catalog included.

// A worker's long poll for a job (LeaseJobRequest.wait_ms).
inline constexpr int32_t kMaxLeaseWaitMs = 30'000;

// A worker's reports (result.proto).
inline constexpr int kMaxResultsPerReport = 4096;
inline constexpr int kMaxResultsPerJob = 1 << 20;    // Any job's results (variants x problems x dtypes).
inline constexpr int kMaxCeilingsPerResult = 8;
inline constexpr int kMaxResourcesPerResult = 64;

// Responses: a list stops before it passes this many bytes (gRPC refuses messages past
// kMaxMessageBytes in api/channel.h, and a failing list would fail for every user).
inline constexpr size_t kMaxListResponseBytes = size_t{32} << 20;

// Error messages: a bad value is quoted by at most this many bytes (api/quote.h); a status message
// is cut at kMaxStatusMessageBytes before it leaves a server (api::ToGrpc), and a client shows at
// most kMaxShownStatusMessageBytes of one.
inline constexpr size_t kMaxQuoteBytes = 40;
inline constexpr size_t kMaxStatusMessageBytes = 4096;
inline constexpr size_t kMaxShownStatusMessageBytes = 2048;

}  // namespace kbench::api

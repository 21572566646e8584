// How a result is split into the store's columns, shared by the SQLite and PostgreSQL stores and the
// coordinator: its series, its utilization, and its raw samples packed apart from the rest of the
// message (so that reading a baseline or a result without samples parses no samples).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/common.pb.h"
#include "kbench/v1/result.pb.h"
#include "server/store/store.h"

namespace kbench::server {

// Dims joined by "x", then the flags: "8192x4096", "32x4096x128 causal".
std::string SeriesShape(const v1::Problem& problem);

// The series a result belongs to: gpu_model and backend from result.device(), cache mode and hot batch
// (launches per sample) from its timing, so that a HOT result never joins a COLD series' baseline.
SeriesKey SeriesOf(const v1::Result& result);

// A row's stored cache_mode, hot_batch and backend columns into a series key.
void SetMeasurementColumns(int64_t cache_mode, int64_t hot_batch, int64_t backend, SeriesKey* series);

// The shape as gauges label it: the shape, with " hot/<batch>" for a HOT series ("8192x4096 hot/20"),
// so that a cold and a hot series never share a gauge.
std::string SeriesLabel(const SeriesKey& series);

// Schema version 3's backfill of rows stored before it: a stored result message's hot batch and
// backend, as SeriesOf would give them for its cache mode (the row's, decided from its shape suffix).
// A message that does not parse gives batch 1 (COLD) or 0 (HOT: unreported) and BACKEND_UNSPECIFIED.
struct LegacySeriesColumns {
  int32_t hot_batch = 1;
  v1::Backend backend = v1::BACKEND_UNSPECIFIED;
};
LegacySeriesColumns LegacySeriesColumnsOf(absl::string_view message, v1::CacheMode cache_mode);

// Utilization against the first (calibrated) roofline ceiling; 0 when the result has none.
double Utilization(const v1::Result& result);

// Raw samples as stored: sorted ascending (what a baseline reads, so that pooling a baseline is a merge
// rather than a sort), with the permutation that restores the order in which they were taken.
struct PackedSamples {
  std::string sorted;  // Little-endian IEEE doubles, 8 bytes each, ascending.
  std::string order;   // Little-endian uint32 per sample: sorted[i] was sample number order[i].
};
PackedSamples PackSamples(const google::protobuf::RepeatedField<double>& samples);
// The sorted samples.
std::vector<double> UnpackSorted(absl::string_view sorted);
// The samples in the order they were taken; the sorted ones when order does not fit them.
std::vector<double> UnpackInOrder(absl::string_view sorted, absl::string_view order);

// A results row back as the API's Result (GetResults): the stored message; without samples unless
// include_samples, then with the stored ones (samples_stored: the row has them) in the order taken.
absl::StatusOr<v1::Result> ReadStoredResult(const std::string& message, bool include_samples, bool samples_stored,
                                            absl::string_view sorted, absl::string_view order);

}  // namespace kbench::server

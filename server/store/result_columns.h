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

// The series a result belongs to (gpu_model from result.device().name()); a HOT-cache result's shape
// carries the flag "hot", so that it never joins a cold series' baseline.
SeriesKey SeriesOf(const v1::Result& result);

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

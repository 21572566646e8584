// Result columns: series key, utilization, sample packing.
#include "server/store/result_columns.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/names.h"

namespace kbench::server {

std::string SeriesShape(const v1::Problem& problem) {
  std::string s = api::ShapeLabel(problem);
  for (const std::string& f : problem.flags()) absl::StrAppend(&s, " ", f);
  return s;
}

SeriesKey SeriesOf(const v1::Result& result) {
  SeriesKey k{result.op(), result.variant(), SeriesShape(result.problem()), result.problem().dtype(),
              result.device().name()};
  // A hot-cache result (data left in L2 between launches) is faster by design, and more so the larger
  // its batch: a series of its own per batch, never in a cold series' baseline nor judged against one.
  if (result.timing().cache_mode() == v1::HOT) {
    k.cache_mode = v1::HOT;
    k.hot_batch = result.timing().launches_per_sample();
  }
  k.backend = result.device().backend();
  return k;
}

void SetMeasurementColumns(int64_t cache_mode, int64_t hot_batch, int64_t backend, SeriesKey* series) {
  series->cache_mode = static_cast<v1::CacheMode>(cache_mode);
  series->hot_batch = static_cast<int32_t>(hot_batch);
  series->backend = static_cast<v1::Backend>(backend);
}

std::string SeriesLabel(const SeriesKey& series) {
  if (series.cache_mode != v1::HOT) return series.shape;
  return absl::StrCat(series.shape, " hot/", series.hot_batch);
}

LegacySeriesColumns LegacySeriesColumnsOf(absl::string_view message, v1::CacheMode cache_mode) {
  LegacySeriesColumns out;
  if (cache_mode == v1::HOT) out.hot_batch = 0;
  v1::Result r;
  if (!r.ParseFromString(std::string(message))) return out;
  out.backend = r.device().backend();
  if (cache_mode == v1::HOT) out.hot_batch = r.timing().launches_per_sample();
  return out;
}

double Utilization(const v1::Result& result) {
  if (!result.has_roofline() || result.roofline().ceilings().empty()) return 0;
  return result.roofline().ceilings(0).utilization();
}

namespace {

void PutLittleEndian(uint64_t v, int bytes, char* out) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t GetLittleEndian(const char* in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(in[i])} << (8 * i);
  return v;
}

}  // namespace

PackedSamples PackSamples(const google::protobuf::RepeatedField<double>& samples) {
  // (value, position) pairs stably sorted by value: the positions' order, without indirect loads.
  std::vector<std::pair<double, uint32_t>> sorted(samples.size());
  for (int i = 0; i < samples.size(); ++i) sorted[i] = {samples[i], static_cast<uint32_t>(i)};
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  PackedSamples out;
  out.sorted.resize(sorted.size() * 8);
  out.order.resize(sorted.size() * 4);
  for (size_t i = 0; i < sorted.size(); ++i) {
    uint64_t bits;
    std::memcpy(&bits, &sorted[i].first, sizeof bits);
    PutLittleEndian(bits, 8, &out.sorted[i * 8]);
    PutLittleEndian(sorted[i].second, 4, &out.order[i * 4]);
  }
  return out;
}

std::vector<double> UnpackSorted(absl::string_view sorted) {
  std::vector<double> out(sorted.size() / 8);
  if constexpr (std::endian::native == std::endian::little) {
    // The stored layout is the host's: one copy (baselines are read on every report).
    if (!out.empty()) std::memcpy(out.data(), sorted.data(), out.size() * 8);
    return out;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const uint64_t bits = GetLittleEndian(&sorted[i * 8], 8);
    std::memcpy(&out[i], &bits, sizeof bits);
  }
  return out;
}

std::vector<double> UnpackInOrder(absl::string_view sorted, absl::string_view order) {
  std::vector<double> values = UnpackSorted(sorted);
  if (order.size() != values.size() * 4) return values;
  std::vector<double> out(values.size());
  std::vector<bool> seen(values.size(), false);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint64_t at = GetLittleEndian(&order[i * 4], 4);
    if (at >= out.size() || seen[at]) return values;  // Not a permutation: the sorted ones are all there is.
    seen[at] = true;
    out[at] = values[i];
  }
  return out;
}

absl::StatusOr<v1::Result> ReadStoredResult(const std::string& message, bool include_samples, bool samples_stored,
                                            absl::string_view sorted, absl::string_view order) {
  v1::Result r;
  if (!r.ParseFromString(message)) return absl::DataLossError("stored result does not parse");
  if (!include_samples) {
    r.mutable_timing()->clear_samples_ns();
  } else if (samples_stored) {
    for (double d : UnpackInOrder(sorted, order)) r.mutable_timing()->add_samples_ns(d);
  }
  return r;
}

}  // namespace kbench::server

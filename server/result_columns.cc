// Result columns: series key, utilization, sample packing.
#include "server/result_columns.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "api/names.h"

namespace kbench::server {

std::string SeriesShape(const v1::Problem& problem) {
  std::string s = api::ShapeLabel(problem);
  for (const std::string& f : problem.flags()) absl::StrAppend(&s, " ", f);
  return s;
}

SeriesKey SeriesOf(const v1::Result& result) {
  return SeriesKey{result.op(), result.variant(), SeriesShape(result.problem()), result.problem().dtype(),
                   result.device().name()};
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
  std::vector<uint32_t> order(samples.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return samples[a] < samples[b]; });
  PackedSamples out;
  out.sorted.resize(order.size() * 8);
  out.order.resize(order.size() * 4);
  for (size_t i = 0; i < order.size(); ++i) {
    uint64_t bits;
    const double d = samples[static_cast<int>(order[i])];
    std::memcpy(&bits, &d, sizeof bits);
    PutLittleEndian(bits, 8, &out.sorted[i * 8]);
    PutLittleEndian(order[i], 4, &out.order[i * 4]);
  }
  return out;
}

std::vector<double> UnpackSorted(absl::string_view sorted) {
  std::vector<double> out(sorted.size() / 8);
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

}  // namespace kbench::server

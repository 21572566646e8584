#include "worker/cuda/datasheet.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace kbench::worker {
namespace {

struct Entry {
  const char* model;          // Canonical name.
  const char* match;          // Lower-case substring of the driver's device name.
  int sm_count;               // 0: any.
  int64_t min_memory_gib;     // Distinguishes 40 GB and 80 GB parts; 0: any.
  double bandwidth_tbps;
  double f32, tf32, bf16, f16, fp8;  // TFLOP/s, dense.
};

// Vendor datasheets; tensor-core rates are the dense (non-sparse) figures.
const std::vector<Entry>& Table() {
  static const std::vector<Entry> t = {
      {"H200 SXM", "h200", 132, 0, 4.8, 67, 494.7, 989.4, 989.4, 1978.9},
      {"H100 NVL", "h100 nvl", 132, 0, 3.9, 60, 417.5, 835.5, 835.5, 1670.5},
      {"H100 PCIe", "h100 pcie", 114, 0, 2.0, 51, 378, 756, 756, 1513},
      {"H100 SXM", "h100", 132, 0, 3.35, 67, 494.7, 989.4, 989.4, 1978.9},
      {"A100 SXM 80GB", "a100-sxm4", 108, 70, 2.039, 19.5, 156, 312, 312, 0},
      {"A100 SXM 40GB", "a100-sxm4", 108, 0, 1.555, 19.5, 156, 312, 312, 0},
      {"A100 PCIe 80GB", "a100", 108, 70, 1.935, 19.5, 156, 312, 312, 0},
      {"A100 PCIe 40GB", "a100", 108, 0, 1.555, 19.5, 156, 312, 312, 0},
      {"L40S", "l40s", 142, 0, 0.864, 91.6, 183, 362.05, 362.05, 733},
      {"L4", "l4", 58, 0, 0.3, 30.3, 60, 121, 121, 242.5},
  };
  return t;
}

}  // namespace

std::optional<v1::DatasheetPeaks> LookupDatasheet(const std::string& device_name, int sm_count, int64_t memory_bytes) {
  std::string name = device_name;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const Entry& e : Table()) {
    if (name.find(e.match) == std::string::npos) continue;
    if (e.sm_count && sm_count && e.sm_count != sm_count) continue;
    if (e.min_memory_gib && memory_bytes < (e.min_memory_gib << 30)) continue;
    // "l4" is a substring of "l40s": require the exact model for the short name.
    if (std::string(e.match) == "l4" && name.find("l40") != std::string::npos) continue;
    v1::DatasheetPeaks p;
    p.set_model(e.model);
    p.set_memory_bytes_per_second(e.bandwidth_tbps * 1e12);
    auto& f = *p.mutable_peak_flops_per_second();
    f["f32"] = e.f32 * 1e12;
    f["tf32"] = e.tf32 * 1e12;
    f["bf16"] = e.bf16 * 1e12;
    f["f16"] = e.f16 * 1e12;
    if (e.fp8 > 0) f["fp8_e4m3"] = e.fp8 * 1e12;
    return p;
  }
  return std::nullopt;
}

}  // namespace kbench::worker

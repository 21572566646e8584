// Size, count, number and enum limits of a worker's registration: its devices, calibrations and
// kernel catalog; see message_bounds.h.
#include "absl/strings/str_cat.h"
#include "api/bounds.h"
#include "api/message_bounds.h"
#include "api/quote.h"

namespace kbench::api {
namespace {

absl::Status CheckNonNegative(const std::string& field, int64_t value) {
  if (value >= 0) return absl::OkStatus();
  return Invalid(field, absl::StrCat("must be >= 0, got ", value));
}

absl::Status CheckCalibration(const std::string& f, const v1::Calibration& c) {
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".device_uuid", c.device_uuid(), kMaxIdBytes));
  KBENCH_RETURN_IF_ERROR(CheckFinite(f + ".copy_bytes_per_second", c.copy_bytes_per_second(), 0, 1e18));
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".peak_flops_per_second", c.peak_flops_per_second_size(), kMaxCalibrationPeaks));
  for (const auto& [dtype, flops] : c.peak_flops_per_second()) {
    const std::string entry = MapEntryPath(f + ".peak_flops_per_second", dtype);
    KBENCH_RETURN_IF_ERROR(CheckRequired(entry + " key", dtype, kMaxNameBytes));
    KBENCH_RETURN_IF_ERROR(CheckFinite(entry, flops, 0, 1e20));
  }
  KBENCH_RETURN_IF_ERROR(CheckFinite(f + ".copy_spread_fraction", c.copy_spread_fraction(), 0, 1e6));
  KBENCH_RETURN_IF_ERROR(CheckFinite(f + ".other_load_fraction", c.other_load_fraction(), 0, 1));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".warning", c.warning(), kMaxShortTextBytes));
  for (auto [name, v] : {std::pair{".read_bytes_per_second", c.read_bytes_per_second()},
                         {".write_bytes_per_second", c.write_bytes_per_second()},
                         {".read_write_bytes_per_second", c.read_write_bytes_per_second()},
                         {".read2_write1_bytes_per_second", c.read2_write1_bytes_per_second()},
                         {".l2_read_bytes_per_second", c.l2_read_bytes_per_second()},
                         {".fma_f32_flops_per_second", c.fma_f32_flops_per_second()},
                         {".sfu_ops_per_second", c.sfu_ops_per_second()}})
    KBENCH_RETURN_IF_ERROR(CheckFinite(f + name, v, 0, 1e20));
  KBENCH_RETURN_IF_ERROR(CheckFinite(f + ".stream_spread_fraction", c.stream_spread_fraction(), 0, 1e6));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".cache_key", c.cache_key(), kMaxShortTextBytes));
  return CheckSize(f + ".method", c.method(), kMaxTextBytes);
}

absl::Status CheckContract(const std::string& f, const v1::LaunchContract& c) {
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".entry", c.entry(), kMaxCustomFileNameBytes));
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".params", c.params_size(), kMaxContractParams));
  for (int i = 0; i < c.params_size(); ++i) {
    const v1::ContractParam& p = c.params(i);
    const std::string pf = At(f + ".params", i);
    KBENCH_RETURN_IF_ERROR(CheckSize(pf + ".name", p.name(), kMaxNameBytes));
    KBENCH_RETURN_IF_ERROR(CheckEnum(pf + ".kind", p.kind(), v1::ContractParam::Kind_IsValid));
    KBENCH_RETURN_IF_ERROR(CheckStrings(pf + ".dims", p.dims(), kMaxDimsPerProblem, kMaxNameBytes, false));
    KBENCH_RETURN_IF_ERROR(CheckEnum(pf + ".fixed_dtype", p.fixed_dtype(), v1::Dtype_IsValid));
    KBENCH_RETURN_IF_ERROR(CheckSize(pf + ".c_type", p.c_type(), kMaxNameBytes));
  }
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".default_block", c.default_block_size(), 3));
  KBENCH_RETURN_IF_ERROR(CheckStrings(f + ".default_grid", c.default_grid(), 3, kMaxGridExprBytes, false));
  KBENCH_RETURN_IF_ERROR(CheckEnums(f + ".dtypes", c.dtypes(), kMaxDtypesPerJob, v1::Dtype_IsValid, false));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".notes", c.notes(), kMaxTextBytes));
  return CheckSize(f + ".template_source", c.template_source(), kMaxTemplateSourceBytes);
}

absl::Status CheckVariant(const std::string& f, const v1::VariantInfo& v) {
  KBENCH_RETURN_IF_ERROR(CheckRequired(f + ".name", v.name(), kMaxNameBytes));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".description", v.description(), kMaxTextBytes));
  KBENCH_RETURN_IF_ERROR(CheckEnum(f + ".backend", v.backend(), v1::Backend_IsValid));
  KBENCH_RETURN_IF_ERROR(CheckEnums(f + ".dtypes", v.dtypes(), kMaxDtypesPerJob, v1::Dtype_IsValid, false));
  return CheckNonNegative(f + ".min_compute_capability", v.min_compute_capability());
}

}  // namespace

absl::Status CheckDeviceBounds(absl::string_view field, const v1::DeviceInfo& d) {
  const std::string f(field);
  KBENCH_RETURN_IF_ERROR(CheckEnum(f + ".backend", d.backend(), v1::Backend_IsValid));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".name", d.name(), kMaxShortTextBytes));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".uuid", d.uuid(), kMaxIdBytes));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".driver_version", d.driver_version(), kMaxShortTextBytes));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".runtime_version", d.runtime_version(), kMaxShortTextBytes));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".driver_release", d.driver_release(), kMaxShortTextBytes));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".triton", d.triton(), kMaxShortTextBytes));
  for (auto [name, v] : {std::pair{".index", int64_t{d.index()}},
                         {".compute_capability_major", d.compute_capability_major()},
                         {".compute_capability_minor", d.compute_capability_minor()},
                         {".multiprocessor_count", d.multiprocessor_count()},
                         {".memory_bytes", d.memory_bytes()},
                         {".l2_cache_bytes", d.l2_cache_bytes()},
                         {".clock_khz", d.clock_khz()},
                         {".memory_clock_khz", d.memory_clock_khz()},
                         {".application_sm_clock_mhz", d.application_sm_clock_mhz()},
                         {".application_memory_clock_mhz", d.application_memory_clock_mhz()}})
    KBENCH_RETURN_IF_ERROR(CheckNonNegative(f + name, v));
  return absl::OkStatus();
}

absl::Status CheckOpInfoBounds(absl::string_view field, const v1::OpInfo& op) {
  const std::string f(field);
  KBENCH_RETURN_IF_ERROR(CheckRequired(f + ".name", op.name(), kMaxNameBytes));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".description", op.description(), kMaxTextBytes));
  KBENCH_RETURN_IF_ERROR(CheckStrings(f + ".dims", op.dims(), kMaxDimsPerProblem, kMaxNameBytes, true));
  KBENCH_RETURN_IF_ERROR(CheckEnums(f + ".dtypes", op.dtypes(), kMaxDtypesPerJob, v1::Dtype_IsValid, false));
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".tensors", op.tensors_size(), kMaxTensorsPerOp));
  for (int i = 0; i < op.tensors_size(); ++i) {
    const v1::TensorInfo& t = op.tensors(i);
    const std::string tf = At(f + ".tensors", i);
    KBENCH_RETURN_IF_ERROR(CheckSize(tf + ".name", t.name(), kMaxNameBytes));
    KBENCH_RETURN_IF_ERROR(CheckStrings(tf + ".dims", t.dims(), kMaxDimsPerProblem, kMaxNameBytes, false));
    KBENCH_RETURN_IF_ERROR(CheckEnum(tf + ".fixed_dtype", t.fixed_dtype(), v1::Dtype_IsValid));
  }
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".variants", op.variants_size(), kMaxVariantsPerOp));
  for (int i = 0; i < op.variants_size(); ++i) KBENCH_RETURN_IF_ERROR(CheckVariant(At(f + ".variants", i), op.variants(i)));
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".presets", op.presets_size(), kMaxPresetsPerOp));
  for (int i = 0; i < op.presets_size(); ++i) {
    const v1::PresetInfo& p = op.presets(i);
    const std::string pf = At(f + ".presets", i);
    KBENCH_RETURN_IF_ERROR(CheckRequired(pf + ".name", p.name(), kMaxNameBytes));
    KBENCH_RETURN_IF_ERROR(CheckCount(pf + ".problems", p.problems_size(), kMaxProblemsPerPreset));
    for (int j = 0; j < p.problems_size(); ++j)
      KBENCH_RETURN_IF_ERROR(CheckProblemBounds(At(pf + ".problems", j), p.problems(j)));
  }
  KBENCH_RETURN_IF_ERROR(CheckStrings(f + ".flags", op.flags(), kMaxFlagsPerOp, kMaxNameBytes, true));
  KBENCH_RETURN_IF_ERROR(CheckNonNegative(f + ".max_dim_value", op.max_dim_value()));
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".derived_dims", op.derived_dims_size(), kMaxDimsPerProblem));
  for (int i = 0; i < op.derived_dims_size(); ++i) {
    const std::string df = At(f + ".derived_dims", i);
    KBENCH_RETURN_IF_ERROR(CheckRequired(df + ".name", op.derived_dims(i).name(), kMaxNameBytes));
    KBENCH_RETURN_IF_ERROR(CheckRequired(df + ".expr", op.derived_dims(i).expr(), kMaxGridExprBytes));
  }
  KBENCH_RETURN_IF_ERROR(CheckStrings(f + ".zero_dims", op.zero_dims(), kMaxDimsPerProblem, kMaxNameBytes, true));
  return op.has_contract() ? CheckContract(f + ".contract", op.contract()) : absl::OkStatus();
}

absl::Status CheckWorkerInfoBounds(absl::string_view field, const v1::WorkerInfo& info) {
  const std::string f(field);
  // The whole first: it is cheap, and it bounds the work of the checks below.
  const size_t bytes = info.ByteSizeLong();
  if (bytes > kMaxWorkerInfoBytes)
    return Invalid(f, absl::StrCat(bytes, " bytes, more than the limit of ", kMaxWorkerInfoBytes));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".worker_id", info.worker_id(), kMaxIdBytes));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".name", info.name(), kMaxShortTextBytes));
  KBENCH_RETURN_IF_ERROR(CheckSize(f + ".address", info.address(), kMaxShortTextBytes));
  if (info.devices().empty()) return Invalid(f + ".devices", "a worker needs at least one device");
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".devices", info.devices_size(), kMaxDevicesPerWorker));
  for (int i = 0; i < info.devices_size(); ++i)
    KBENCH_RETURN_IF_ERROR(CheckDeviceBounds(At(f + ".devices", i), info.devices(i)));
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".calibrations", info.calibrations_size(), kMaxDevicesPerWorker));
  for (int i = 0; i < info.calibrations_size(); ++i)
    KBENCH_RETURN_IF_ERROR(CheckCalibration(At(f + ".calibrations", i), info.calibrations(i)));
  KBENCH_RETURN_IF_ERROR(CheckCount(f + ".catalog", info.catalog_size(), kMaxCatalogOps));
  for (int i = 0; i < info.catalog_size(); ++i)
    KBENCH_RETURN_IF_ERROR(CheckOpInfoBounds(At(f + ".catalog", i), info.catalog(i)));
  KBENCH_RETURN_IF_ERROR(CheckLabels(f + ".labels", info.labels()));
  return CheckSize(f + ".suite_version", info.suite_version(), kMaxShortTextBytes);
}

}  // namespace kbench::api

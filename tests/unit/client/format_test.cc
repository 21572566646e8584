// Tests of the output formats on hand-built messages: text table, Markdown, CSV and JSON for results,
// and the tables of jobs, workers and kernels.
#include "client/format.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "csv_parse.h"

namespace kbench::client {
namespace {

using testing::ParseCsv;

using ::testing::HasSubstr;
using ::testing::Not;

v1::Result OkResult() {
  v1::Result r;
  r.set_job_id("j-1");
  r.set_index(0);
  r.set_op("rmsnorm");
  r.set_variant("cpu_naive");
  auto* d = r.mutable_problem()->add_dims();
  d->set_name("rows");
  d->set_value(256);
  d = r.mutable_problem()->add_dims();
  d->set_name("cols");
  d->set_value(1024);
  r.mutable_problem()->set_dtype(v1::DTYPE_BF16);
  r.set_status(v1::OK);
  auto* t = r.mutable_timing();
  t->set_median_ns(12345);
  t->set_min_ns(12000);
  t->set_p10_ns(12100);
  t->set_p90_ns(12600);
  t->set_max_ns(13000);
  t->set_count(42);
  t->set_median_relative_standard_error(0.0031);
  t->add_samples_ns(12345);
  t->add_samples_ns(12400.5);
  auto* rf = r.mutable_roofline();
  rf->set_bytes(1048576);
  rf->set_flops(786432);
  rf->set_achieved_bytes_per_second(84.9e9);
  rf->set_achieved_flops_per_second(63.7e9);
  rf->set_bound_class(v1::MEMORY_BOUND);
  auto* c = rf->add_ceilings();
  c->set_source("calibrated");
  c->set_bandwidth_bytes_per_second(100e9);
  c->set_peak_flops_per_second(1e12);
  c->set_bandwidth_fraction(0.849);
  c->set_flops_fraction(0.0637);
  c->set_utilization(0.82);
  auto* ds = rf->add_ceilings();
  ds->set_source("datasheet");
  ds->set_bandwidth_fraction(0.5);
  r.mutable_correctness()->set_passed(true);
  r.mutable_correctness()->set_trials(3);
  r.mutable_device()->set_name("AMD EPYC 9654");
  r.mutable_device()->set_uuid("host-1");
  r.set_worker_id("w-1");
  return r;
}

std::vector<v1::Result> Results() {
  v1::Result bad = OkResult();
  bad.set_index(1);
  bad.set_variant("cpu_broken");
  bad.set_status(v1::INCORRECT);
  bad.clear_timing();
  bad.mutable_correctness()->set_passed(false);
  bad.mutable_correctness()->set_max_rel_error(0.031);
  v1::Result skipped = OkResult();
  skipped.set_index(2);
  skipped.set_variant("v9_tma");
  skipped.set_status(v1::SKIPPED);
  skipped.clear_timing();
  skipped.clear_roofline();
  skipped.clear_correctness();
  skipped.set_status_message("needs compute capability 9.0, device has 8.0\nsecond line");
  return {OkResult(), bad, skipped};
}

TEST(FormatResults, TableHasColumnsAndValues) {
  std::string out = FormatResults(Results(), Format::kTable, false);
  for (const char* h : {"op", "variant", "problem", "dtype", "status", "median", "±RSE within-run", "GB/s", "GFLOP/s", "%BW",
                        "%FLOP", "util", "class", "check", "samples"})
    EXPECT_THAT(out, HasSubstr(h)) << h;
  EXPECT_THAT(out, HasSubstr("device: AMD EPYC 9654, calibrated copy 100 GB/s"));
  EXPECT_THAT(out, HasSubstr("256x1024"));
  EXPECT_THAT(out, HasSubstr("12.3 us"));
  EXPECT_THAT(out, HasSubstr("±0.31%"));
  EXPECT_THAT(out, HasSubstr("84.9"));   // GB/s
  EXPECT_THAT(out, HasSubstr("63.7"));   // GFLOP/s
  EXPECT_THAT(out, HasSubstr("84.9%"));  // %BW of the calibrated ceiling, not the datasheet's 50%.
  EXPECT_THAT(out, HasSubstr("6.37%"));
  EXPECT_THAT(out, HasSubstr("82.0%"));
  EXPECT_THAT(out, HasSubstr("memory"));
  EXPECT_THAT(out, HasSubstr("FAIL max_rel=0.031"));
  EXPECT_THAT(out, HasSubstr("needs compute capability 9.0, device has 8.0..."));
  EXPECT_THAT(out, Not(HasSubstr("second line")));
  EXPECT_THAT(out, Not(HasSubstr("50%")));
  // The first result's row, column by column.
  std::vector<std::string> lines = absl::StrSplit(out, '\n');
  ASSERT_GE(lines.size(), 5u);
  std::vector<std::string> cells = absl::StrSplit(lines[3], ' ', absl::SkipEmpty());
  EXPECT_THAT(cells, ::testing::ElementsAre("rmsnorm", "cpu_naive", "256x1024", "bf16", "OK", "12.3", "us", "±0.31%",
                                            "84.9", "63.7", "84.9%", "6.37%", "82.0%", "memory", "ok", "42"));
}

TEST(FormatResults, OneTablePerDevice) {
  auto rs = Results();
  rs[1].mutable_device()->set_name("NVIDIA H200");
  rs[1].mutable_device()->set_uuid("GPU-2");
  rs[1].mutable_roofline()->mutable_ceilings(0)->set_bandwidth_bytes_per_second(4.1e12);
  std::string out = FormatResults(rs, Format::kTable, false);
  EXPECT_THAT(out, HasSubstr("device: AMD EPYC 9654"));
  EXPECT_THAT(out, HasSubstr("device: NVIDIA H200, calibrated copy 4100 GB/s"));
  EXPECT_LT(out.find("EPYC"), out.find("H200"));
}

// A result above its ceiling is marked beside util and explained under its table, in every format.
TEST(FormatResults, ARooflineWarningIsMarkedAndExplained) {
  auto rs = Results();
  rs[0].mutable_roofline()->set_warning("168.1% of the calibrated bandwidth, beyond the calibration's spread (1.0%)");
  const std::string out = FormatResults(rs, Format::kTable, false);
  std::vector<std::string> lines = absl::StrSplit(out, '\n');
  ASSERT_GE(lines.size(), 5u);
  EXPECT_THAT(lines[3], HasSubstr("82.0% !"));
  EXPECT_THAT(lines[4], Not(HasSubstr("!")));
  EXPECT_THAT(out, HasSubstr("! rmsnorm cpu_naive 256x1024 bf16: 168.1% of the calibrated bandwidth"));
  EXPECT_THAT(FormatResults(rs, Format::kMarkdown, false), HasSubstr("- ! rmsnorm cpu_naive"));
  auto rows = ParseCsv(FormatResults(rs, Format::kCsv, false));
  const auto it = std::find(rows[0].begin(), rows[0].end(), "roofline_warning");
  ASSERT_NE(it, rows[0].end());
  EXPECT_THAT(rows[1][static_cast<size_t>(it - rows[0].begin())], HasSubstr("168.1%"));
  EXPECT_EQ(rows[2][static_cast<size_t>(it - rows[0].begin())], "");
  // Without a warning nothing is marked.
  EXPECT_THAT(FormatResults(Results(), Format::kTable, false), Not(HasSubstr("!")));
  // A warning every result shares (a suspect calibration) is explained once.
  for (auto& r : rs) r.mutable_roofline()->set_warning("calibration suspect: the copy rounds spread 57%");
  const std::string shared = FormatResults(rs, Format::kTable, false);
  EXPECT_THAT(shared, HasSubstr("! rmsnorm cpu_naive 256x1024 bf16 (and 2 more results): calibration suspect"));
  EXPECT_EQ(shared.find("calibration suspect"), shared.rfind("calibration suspect"));
}

TEST(FormatResults, CeilingWriteBackThrottledAndClocksAreShownWhenPresent) {
  v1::Result r = OkResult();
  r.mutable_roofline()->mutable_ceilings(0)->set_bandwidth_ceiling("2:1");
  r.mutable_roofline()->mutable_ceilings(0)->set_peak_ceiling("f32 FMA");
  r.mutable_timing()->set_write_back_ns(7500);
  r.mutable_timing()->set_discarded_throttled(3);
  auto* start = r.mutable_timing()->mutable_clocks_start();
  start->set_sm_clock_mhz(1980);
  start->set_memory_clock_mhz(3201);
  start->set_power_watts(412.4);
  auto* end = r.mutable_timing()->mutable_clocks_end();
  end->set_sm_clock_mhz(1755);
  end->set_memory_clock_mhz(3201);
  end->set_power_watts(698);
  const std::string out = FormatResults({r}, Format::kTable, false);
  EXPECT_THAT(out, HasSubstr("±RSE within-run"));
  EXPECT_THAT(out, HasSubstr("ceiling"));
  EXPECT_THAT(out, HasSubstr(" 2:1 "));
  EXPECT_THAT(out, HasSubstr("7.50 us"));
  EXPECT_THAT(out, HasSubstr("42 (+3 throttled)"));
  EXPECT_THAT(out, HasSubstr("1980/3201 MHz 412 W -> 1755/3201 MHz 698 W"));
  // The device line no longer calls a mix's ceiling "copy".
  EXPECT_THAT(out, Not(HasSubstr("calibrated copy")));
  // Compute-bound: the peak's name.
  r.mutable_roofline()->set_bound_class(v1::COMPUTE_BOUND);
  EXPECT_THAT(FormatResults({r}, Format::kTable, false), HasSubstr("f32 FMA"));
  // CSV carries them as raw values.
  auto rows = ParseCsv(FormatResults({r}, Format::kCsv, false));
  ASSERT_EQ(rows.size(), 2u);
  auto col = [&](const std::string& name) {
    auto it = std::find(rows[0].begin(), rows[0].end(), name);
    EXPECT_NE(it, rows[0].end()) << name;
    return static_cast<size_t>(it - rows[0].begin());
  };
  EXPECT_EQ(rows[1][col("calibrated_bandwidth_ceiling")], "2:1");
  EXPECT_EQ(rows[1][col("write_back_ns")], "7500");
  EXPECT_EQ(rows[1][col("throttled_samples")], "3");
  EXPECT_EQ(rows[1][col("sm_clock_mhz_end")], "1755");
  // Results without them keep the old columns.
  EXPECT_THAT(FormatResults(Results(), Format::kTable, false), Not(HasSubstr("clocks")));
}

TEST(FormatResults, SamplesAddsSpreadColumns) {
  std::string out = FormatResults({OkResult()}, Format::kTable, true);
  EXPECT_THAT(out, HasSubstr("p10"));
  EXPECT_THAT(out, HasSubstr("12.6 us"));
}

TEST(FormatResults, MarkdownTable) {
  std::string out = FormatResults(Results(), Format::kMarkdown, false);
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 6u);  // Device line, header, separator, three rows.
  EXPECT_EQ(lines[0], "**device: AMD EPYC 9654, calibrated copy 100 GB/s**");
  EXPECT_EQ(lines[1].rfind("| op | variant | problem |", 0), 0u) << lines[1];
  EXPECT_THAT(lines[2], HasSubstr("|---|"));
  EXPECT_THAT(lines[2], HasSubstr("---:|"));  // Numbers right-aligned.
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].front(), '|');
    EXPECT_EQ(lines[i].back(), '|');
    EXPECT_EQ(std::count(lines[i].begin(), lines[i].end(), '|'), 16) << lines[i];
  }
}

TEST(Format, MarkdownEscapesPipes) {
  Table t;
  t.header = {"a", "b"};
  t.AddRow({"x|y", "z"});
  EXPECT_THAT(RenderMarkdown(t), HasSubstr("| x\\|y | z |"));
}

TEST(FormatResults, CsvParsesBackWithRawNumbers) {
  auto rs = Results();
  rs[2].set_status_message("error, with \"quotes\"\nand a newline");
  std::string out = FormatResults(rs, Format::kCsv, true);
  auto rows = ParseCsv(out);
  ASSERT_EQ(rows.size(), 4u);
  const auto& header = rows[0];
  for (const auto& row : rows) EXPECT_EQ(row.size(), header.size());
  auto col = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<size_t>(it - header.begin());
  };
  EXPECT_EQ(rows[1][col("median_ns")], "12345");
  EXPECT_EQ(rows[1][col("achieved_bytes_per_second")], "84900000000");
  EXPECT_EQ(rows[1][col("calibrated_bandwidth_fraction")], "0.849");
  EXPECT_EQ(rows[1][col("problem")], "256x1024");
  EXPECT_EQ(rows[1][col("dims")], "rows=256,cols=1024");
  EXPECT_EQ(rows[1][col("samples_ns")], "12345 12400.5");
  EXPECT_EQ(rows[2][col("status")], "INCORRECT");
  EXPECT_EQ(rows[2][col("max_rel_error")], "0.031");
  EXPECT_EQ(rows[3][col("status_message")], "error, with \"quotes\"\nand a newline");
}

TEST(FormatResults, JsonParsesBackIntoResults) {
  auto rs = Results();
  std::string out = FormatResults(rs, Format::kJson, true);
  EXPECT_EQ(out.front(), '[');
  EXPECT_THAT(out, HasSubstr("\"median_ns\""));  // Proto field names, stable for jq.
  EXPECT_THAT(out, HasSubstr("\"INCORRECT\""));
  v1::GetResultsResponse back;
  auto s = google::protobuf::util::JsonStringToMessage("{\"results\": " + out + "}", &back);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(back.results_size(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(back.results(i).SerializeAsString(), rs[i].SerializeAsString()) << i;
  EXPECT_EQ(FormatResults({}, Format::kJson, false), "[]\n");
}

TEST(FormatJobs, TableAndProgressLine) {
  v1::Job j;
  j.set_job_id("j-abc");
  j.mutable_spec()->set_op("rmsnorm");
  j.set_state(v1::RUNNING);
  j.mutable_progress()->set_results_done(5);
  j.mutable_progress()->set_results_total(12);
  j.mutable_progress()->set_current("rmsnorm cpu_naive 256x1024 bf16");
  j.set_worker_id("w-1");
  j.set_attempts(1);
  j.set_created_unix_ms(1'000'000);
  EXPECT_EQ(ProgressLine(j), "j-abc RUNNING 5/12 rmsnorm cpu_naive 256x1024 bf16");
  std::string out = FormatJobs({j}, Format::kTable, 1'000'000 + 75'000);
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  std::vector<std::string> cells = absl::StrSplit(lines[2], ' ', absl::SkipEmpty());
  EXPECT_THAT(cells, ::testing::ElementsAre("j-abc", "rmsnorm", "RUNNING", "5/12", "w-1", "1", "1m"));
  j.set_state(v1::QUEUED);
  j.clear_progress();
  EXPECT_EQ(ProgressLine(j), "j-abc QUEUED rmsnorm");
}

TEST(FormatWorkers, OneRowPerDevice) {
  v1::WorkerStatus w;
  w.mutable_info()->set_worker_id("w-1");
  w.mutable_info()->set_name("gpu-node-7");
  w.set_state("busy");
  w.set_last_heartbeat_unix_ms(10'000);
  w.set_current_job_id("j-abc");
  for (int i = 0; i < 2; ++i) {
    auto* d = w.mutable_info()->add_devices();
    d->set_name("NVIDIA H200");
    d->set_uuid("GPU-" + std::to_string(i));
    d->set_memory_bytes(141LL << 30);
    auto* c = w.mutable_info()->add_calibrations();
    c->set_device_uuid("GPU-" + std::to_string(i));
    c->set_copy_bytes_per_second(i == 0 ? 4.2e12 : 4.1e12);
    (*c->mutable_peak_flops_per_second())["f32"] = 51.2e12;
  }
  w.mutable_info()->add_catalog()->set_name("rmsnorm");
  std::string out = FormatWorkers({w}, Format::kTable, 13'000);
  EXPECT_THAT(out, HasSubstr("gpu-node-7"));
  EXPECT_THAT(out, HasSubstr("141 GiB"));
  EXPECT_THAT(out, HasSubstr("4200"));
  EXPECT_THAT(out, HasSubstr("4100"));
  EXPECT_THAT(out, HasSubstr("51200"));
  EXPECT_THAT(out, HasSubstr("3s"));
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 4);
  // The second device's row does not repeat the worker.
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  EXPECT_THAT(lines[3], Not(HasSubstr("w-1")));
  auto csv = ParseCsv(FormatWorkers({w}, Format::kCsv, 13'000));
  ASSERT_EQ(csv.size(), 3u);
  EXPECT_EQ(csv[2][0], "w-1");  // CSV repeats it: every row stands alone.
  std::string json = FormatWorkers({w}, Format::kJson, 0);
  EXPECT_THAT(json, HasSubstr("gpu-node-7"));
  EXPECT_THAT(json, Not(HasSubstr("rmsnorm")));  // The catalog is left to `kernels`.
}

TEST(FormatWorkers, ASuspectCalibrationIsMarkedAndExplained) {
  v1::WorkerStatus w;
  w.mutable_info()->set_worker_id("w-1");
  w.set_state("idle");
  auto* d = w.mutable_info()->add_devices();
  d->set_name("NVIDIA H200");
  d->set_uuid("GPU-0");
  auto* c = w.mutable_info()->add_calibrations();
  c->set_device_uuid("GPU-0");
  c->set_copy_bytes_per_second(1.1e12);
  c->set_warning("every calibration attempt failed its checks (3; last: device busy)");
  const std::string out = FormatWorkers({w}, Format::kTable, 0);
  EXPECT_THAT(out, HasSubstr("1100 !"));
  EXPECT_THAT(out, HasSubstr("! w-1 device 0: every calibration attempt failed its checks"));
  c->clear_warning();
  EXPECT_THAT(FormatWorkers({w}, Format::kTable, 0), Not(HasSubstr("!")));
}

TEST(FormatWorkers, HealthColumn) {
  v1::WorkerStatus ok, sick;
  ok.mutable_info()->set_worker_id("w-ok");
  ok.set_state("idle");
  sick.mutable_info()->set_worker_id("w-sick");
  sick.set_state("idle");
  sick.set_unhealthy(true);
  sick.set_health_reason("calibration drifted 40% below the cached ceiling");
  for (auto* w : {&ok, &sick}) {
    auto* d = w->mutable_info()->add_devices();
    d->set_name("NVIDIA H200");
    w->mutable_info()->add_devices()->set_name("NVIDIA H200");  // A second device: the cell is not repeated.
  }
  std::string out = FormatWorkers({ok, sick}, Format::kTable, 0);
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_THAT(lines[0], HasSubstr("health"));
  EXPECT_THAT(lines[2], HasSubstr("w-ok"));
  EXPECT_THAT(lines[2], HasSubstr(" ok "));
  EXPECT_THAT(lines[4], HasSubstr("UNHEALTHY: calibration drifted 40% below the cached ceiling"));
  EXPECT_THAT(lines[5], Not(HasSubstr("UNHEALTHY")));
  std::string md = FormatWorkers({sick}, Format::kMarkdown, 0);
  EXPECT_THAT(md, HasSubstr("| health |"));
  EXPECT_THAT(md, HasSubstr("| UNHEALTHY: calibration drifted 40% below the cached ceiling |"));
  // CSV: the raw flag and reason.
  auto csv = ParseCsv(FormatWorkers({ok, sick}, Format::kCsv, 0));
  ASSERT_EQ(csv.size(), 5u);
  EXPECT_EQ(csv[0][3], "unhealthy");
  EXPECT_EQ(csv[0][4], "health_reason");
  EXPECT_EQ(csv[1][3], "false");
  EXPECT_EQ(csv[1][4], "");
  EXPECT_EQ(csv[3][3], "true");
  EXPECT_EQ(csv[3][4], "calibration drifted 40% below the cached ceiling");
  EXPECT_THAT(FormatWorkers({sick}, Format::kJson, 0), HasSubstr("\"health_reason\":\"calibration drifted"));
  // Unhealthy without a reason still says so.
  sick.clear_health_reason();
  EXPECT_THAT(FormatWorkers({sick}, Format::kTable, 0), HasSubstr("UNHEALTHY"));
}

TEST(FormatKernels, VariantsAndPresets) {
  v1::OpInfo op;
  op.set_name("rmsnorm");
  op.add_dims("rows");
  op.add_dims("cols");
  op.add_dtypes(v1::DTYPE_F32);
  op.add_dtypes(v1::DTYPE_BF16);
  auto* p = op.add_presets();
  p->set_name("small");
  p->add_problems();
  p->add_problems();
  op.add_presets()->set_name("canonical");
  auto* v = op.add_variants();
  v->set_name("cpu_naive");
  v->set_backend(v1::BACKEND_CPU);
  v->set_description("one row per thread");
  v = op.add_variants();
  v->set_name("v5_tma");
  v->set_backend(v1::BACKEND_CUDA);
  v->set_min_compute_capability(90);
  v->set_description("TMA loads");
  std::string out = FormatKernels({op}, Format::kTable);
  EXPECT_THAT(out, HasSubstr("rows,cols"));
  EXPECT_THAT(out, HasSubstr("f32,bf16"));
  EXPECT_THAT(out, HasSubstr("small(2) canonical(0)"));
  EXPECT_THAT(out, HasSubstr("cpu_naive"));
  EXPECT_THAT(out, HasSubstr("cuda sm90+"));
  EXPECT_THAT(out, HasSubstr("TMA loads"));
  std::string md = FormatKernels({op}, Format::kMarkdown);
  EXPECT_THAT(md, HasSubstr("| rmsnorm | rows,cols |"));
  v1::ListKernelsResponse back;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage("{\"ops\": " + FormatKernels({op}, Format::kJson) + "}", &back).ok());
  EXPECT_EQ(back.ops(0).variants_size(), 2);
}

TEST(FormatKernels, SaysWhichDimsAShapeMayLeaveOutOrSetToZero) {
  v1::OpInfo op, paged, plain;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(name: "w4a16_gemm" dims: [ "M", "N", "K", "K_words", "groups" ]
           derived_dims { name: "K_words" expr: "K / 8" }
           derived_dims { name: "groups" expr: "cdiv(K, 128)" })pb",
      &op));
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(name: "paged_decode" dims: "long_context" zero_dims: "long_context")pb", &paged));
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(name: "gemm" dims: "M")pb", &plain));
  for (Format f : {Format::kTable, Format::kMarkdown}) {
    const std::string out = FormatKernels({op, paged, plain}, f);
    EXPECT_THAT(out, HasSubstr("w4a16_gemm: K_words = K / 8, groups = cdiv(K, 128)\n"));
    EXPECT_THAT(out, HasSubstr("paged_decode: long_context may be 0\n"));
    EXPECT_THAT(out, Not(HasSubstr("  gemm: ")));
  }
  EXPECT_THAT(FormatKernels({plain}, Format::kTable), Not(HasSubstr("Derived dims")));
  EXPECT_THAT(FormatKernels({op}, Format::kCsv), Not(HasSubstr("Derived dims")));
}

TEST(Format, ParseFormat) {
  EXPECT_EQ(*ParseFormat("md"), Format::kMarkdown);
  EXPECT_EQ(*ParseFormat("CSV"), Format::kCsv);
  EXPECT_FALSE(ParseFormat("xml").ok());
  EXPECT_THAT(std::string(ParseFormat("xml").status().message()), HasSubstr("--format"));
}

}  // namespace
}  // namespace kbench::client

// Tests of the Roofline chart: the SVG is well-formed XML with an <svg> root, one <circle> per drawn
// result where the log-log axes put it, the roofs where the ceilings put them, every coordinate finite
// and inside the viewBox; and of `kbench-client plot` against an in-process coordinator.
#include <stdlib.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "client/commands.h"
#include "client/plot_svg.h"
#include "fake_coordinator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "svg_reader.h"

namespace kbench::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

using namespace testing;  // NOLINT: the SVG reader (svg_reader.h)

// --- Results ---

struct Ceiling {
  std::string source;
  double bandwidth, peak;
};

v1::Result MakeResult(const std::string& variant, int64_t rows, v1::Dtype dtype, double bytes, double flops,
                      double median_ns, const std::string& device, std::vector<Ceiling> ceilings,
                      v1::ResultStatus status = v1::OK) {
  v1::Result r;
  r.set_job_id("j-1");
  r.set_op("rmsnorm");
  r.set_variant(variant);
  r.set_status(status);
  auto* d = r.mutable_problem()->add_dims();
  d->set_name("rows");
  d->set_value(rows);
  auto* c = r.mutable_problem()->add_dims();
  c->set_name("cols");
  c->set_value(4096);
  r.mutable_problem()->set_dtype(dtype);
  r.mutable_device()->set_name(device);
  r.mutable_timing()->set_median_ns(median_ns);
  r.mutable_timing()->set_count(10);
  auto* rf = r.mutable_roofline();
  rf->set_bytes(bytes);
  rf->set_flops(flops);
  rf->set_arithmetic_intensity(bytes > 0 ? flops / bytes : 0);
  rf->set_achieved_bytes_per_second(bytes / (median_ns * 1e-9));
  rf->set_achieved_flops_per_second(flops / (median_ns * 1e-9));
  rf->set_bound_class(v1::MEMORY_BOUND);
  for (const auto& k : ceilings) {
    auto* cl = rf->add_ceilings();
    cl->set_source(k.source);
    cl->set_bandwidth_bytes_per_second(k.bandwidth);
    cl->set_peak_flops_per_second(k.peak);
    cl->set_ridge_flops_per_byte(k.peak / k.bandwidth);
    cl->set_utilization(0.5);
  }
  return r;
}

constexpr double kBw = 2e12, kPeak = 60e12;  // Ridge at 30 FLOP/byte.
const std::vector<Ceiling> kH100 = {{"calibrated", kBw, kPeak}, {"datasheet", 3.35e12, 67e12}};

std::vector<v1::Result> Sample() {
  return {
      // 1 FLOP/byte at 1 TFLOP/s; 4 FLOP/byte exactly on the memory roof (8 TFLOP/s); compute-bound at peak.
      MakeResult("v1_naive", 8192, v1::DTYPE_BF16, 1e9, 1e9, 1e6, "NVIDIA H100", kH100),
      MakeResult("v2_vec", 8192, v1::DTYPE_BF16, 1e9, 4e9, 4e9 / 8e12 * 1e9, "NVIDIA H100", kH100),
      MakeResult("v2_vec", 32768, v1::DTYPE_BF16, 1e9, 100e9, 100e9 / kPeak * 1e9, "NVIDIA H100", kH100),
      MakeResult("v3_skip", 8192, v1::DTYPE_BF16, 1e9, 1e9, 1e6, "NVIDIA H100", kH100, v1::SKIPPED),
      MakeResult("v4_bad", 8192, v1::DTYPE_BF16, 1e9, 1e9, 1e6, "NVIDIA H100", kH100, v1::INCORRECT),
  };
}

Document Render(const std::vector<v1::Result>& results, CeilingSource source, RooflineChart* chart_out = nullptr) {
  auto chart = RenderRooflineSvg(results, source);
  EXPECT_TRUE(chart.ok()) << chart.status();
  if (!chart.ok()) return Document{"render failed", {}};
  Document doc = ParseXml(chart->svg);
  EXPECT_EQ(doc.error, "") << chart->svg;
  if (chart_out != nullptr) *chart_out = *chart;
  return doc;
}

TEST(RooflineSvg, IsWellFormedWithOneCirclePerOkResult) {
  RooflineChart chart;
  Document doc = Render(Sample(), CeilingSource::kCalibrated, &chart);
  ASSERT_EQ(doc.error, "");
  const Element& root = doc.elements.front();
  EXPECT_EQ(root.name, "svg");
  EXPECT_EQ(root.attrs.at("xmlns"), "http://www.w3.org/2000/svg");
  EXPECT_EQ(doc.All("circle").size(), 3u);  // SKIPPED and INCORRECT are not drawn.
  EXPECT_EQ(chart.points, 3);
  EXPECT_THAT(chart.notes, ElementsAre(HasSubstr("1 INCORRECT, 1 SKIPPED")));
  ExpectInsideViewBox(doc);
  // The title names the device and is drawn as text too.
  bool titled = false;
  for (const auto* t : doc.All("text")) titled = titled || t->text == "Roofline — NVIDIA H100";
  EXPECT_TRUE(titled);
}

TEST(RooflineSvg, PointsAndRoofsSitWhereTheNumbersPutThem) {
  Document doc = Render(Sample(), CeilingSource::kCalibrated);
  ASSERT_EQ(doc.error, "");
  auto circles = doc.All("circle");
  ASSERT_EQ(circles.size(), 3u);
  std::vector<double> cx, cy;
  for (const auto* c : circles) cx.push_back(Attr(*c, "cx")), cy.push_back(Attr(*c, "cy"));
  // More intensity is further right; more FLOP/s is higher up (smaller y).
  EXPECT_LT(cx[0], cx[1]);
  EXPECT_LT(cx[1], cx[2]);
  EXPECT_GT(cy[0], cy[1]);
  EXPECT_GT(cy[1], cy[2]);
  // Log axes: a decade is the same distance everywhere. Points 0 and 1 are 1 -> 4 FLOP/byte and
  // 1 -> 8 TFLOP/s: dx/dy = log 4 / log 8 in units of a decade (the axes' scales differ).
  std::vector<const Element*> memory, compute;
  for (const auto* p : doc.All("polyline")) {
    if (HasClass(*p, "roof-memory")) memory.push_back(p);
    if (HasClass(*p, "roof-compute")) compute.push_back(p);
  }
  ASSERT_EQ(memory.size(), 1u);
  ASSERT_EQ(compute.size(), 1u);
  // Point 1 achieves bandwidth x intensity exactly: it lies on the memory roof's segment.
  auto m = PolylinePoints(*memory[0]);
  ASSERT_EQ(m.size(), 2u);
  const double t = (cx[1] - m[0].first) / (m[1].first - m[0].first);
  EXPECT_GT(t, 0);
  EXPECT_LT(t, 1);
  EXPECT_NEAR(m[0].second + t * (m[1].second - m[0].second), cy[1], 0.5);
  // Point 2 runs at the peak: on the compute roof, which starts where the memory roof ends (the ridge).
  auto k = PolylinePoints(*compute[0]);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_NEAR(k[0].second, cy[2], 0.5);
  EXPECT_NEAR(k[1].second, cy[2], 0.5);
  EXPECT_NEAR(k[0].first, m[1].first, 0.5);
  EXPECT_NEAR(k[0].second, m[1].second, 0.5);
  EXPECT_LT(k[0].first, cx[2]);  // Ridge at 30 FLOP/byte, point at 100.
  // Roof labels: the calibrated bandwidth and the bf16 peak.
  std::set<std::string> texts;
  for (const auto* e : doc.All("text")) texts.insert(e->text);
  EXPECT_TRUE(texts.count("copy 2.00 TB/s")) << ::testing::PrintToString(texts);
  EXPECT_TRUE(texts.count("bf16 peak 60.0 TFLOP/s")) << ::testing::PrintToString(texts);
}

TEST(RooflineSvg, AxisTicksAreWholeDecades) {
  Document doc = Render(Sample(), CeilingSource::kCalibrated);
  ASSERT_EQ(doc.error, "");
  std::vector<std::string> xticks, yticks;
  std::vector<double> tick_x, tick_y;
  for (const auto* e : doc.All("text")) {
    if (HasClass(*e, "tick-x")) xticks.push_back(e->text), tick_x.push_back(Attr(*e, "x"));
    if (HasClass(*e, "tick-y")) yticks.push_back(e->text), tick_y.push_back(Attr(*e, "y"));
  }
  // Intensities 1..100 and the ridge at 30: the axis runs from 10^-0.5 to 10^2.5 (half decades at the
  // ends, three decades at least); FLOP/s 1 T..60 T: 10^11.5 to 10^14.5.
  EXPECT_THAT(xticks, ElementsAre("1", "10", "100"));
  EXPECT_THAT(yticks, ElementsAre("1 T", "10 T", "100 T"));
  // Evenly spaced: log axes.
  for (size_t i = 2; i < tick_x.size(); ++i) EXPECT_NEAR(tick_x[i] - tick_x[i - 1], tick_x[1] - tick_x[0], 0.2);
  for (size_t i = 2; i < tick_y.size(); ++i) EXPECT_NEAR(tick_y[i] - tick_y[i - 1], tick_y[1] - tick_y[0], 0.2);
  std::set<std::string> texts;
  for (const auto* e : doc.All("text")) texts.insert(e->text);
  EXPECT_TRUE(texts.count("Arithmetic intensity (FLOP/byte)"));
  EXPECT_TRUE(texts.count("Attained FLOP/s"));
}

TEST(RooflineSvg, ColoursPerVariantAndLabelsWithVariantAndShape) {
  Document doc = Render(Sample(), CeilingSource::kCalibrated);
  ASSERT_EQ(doc.error, "");
  auto circles = doc.All("circle");
  ASSERT_EQ(circles.size(), 3u);
  EXPECT_NE(circles[0]->attrs.at("fill"), circles[1]->attrs.at("fill"));
  EXPECT_EQ(circles[1]->attrs.at("fill"), circles[2]->attrs.at("fill"));  // Both v2_vec.
  std::set<std::string> texts;
  for (const auto* e : doc.All("text")) texts.insert(e->text);
  for (const char* label : {"v1_naive 8192x4096", "v2_vec 8192x4096", "v2_vec 32768x4096"})
    EXPECT_TRUE(texts.count(label)) << label << " in " << ::testing::PrintToString(texts);
  // The legend has each drawn variant once, with its colour; not the variants that were not drawn.
  EXPECT_TRUE(texts.count("v1_naive"));
  EXPECT_TRUE(texts.count("v2_vec"));
  EXPECT_FALSE(texts.count("v3_skip"));
  std::vector<std::string> swatches;
  for (const auto* r : doc.All("rect"))
    if (r->attrs.count("rx")) swatches.push_back(r->attrs.at("fill"));
  EXPECT_THAT(swatches, ElementsAre(circles[0]->attrs.at("fill"), circles[1]->attrs.at("fill")));
}

TEST(RooflineSvg, ManyVariantsGetDistinctColours) {
  std::vector<v1::Result> results;
  for (int i = 0; i < 16; ++i)
    results.push_back(MakeResult("v" + std::to_string(i), 1 << i, v1::DTYPE_F32, 1e9, 1e9 * (i + 1), 1e6,
                                 "cpu", {{"calibrated", 50e9, 1e12}}));
  Document doc = Render(results, CeilingSource::kCalibrated);
  ASSERT_EQ(doc.error, "");
  std::set<std::string> fills;
  for (const auto* c : doc.All("circle")) fills.insert(c->attrs.at("fill"));
  EXPECT_EQ(fills.size(), 16u);
  ExpectInsideViewBox(doc);
}

TEST(RooflineSvg, DatasheetCeilingsAndFallbackForUnknownDevices) {
  std::vector<v1::Result> results = Sample();
  results.push_back(MakeResult("cpu_naive", 64, v1::DTYPE_F32, 1e6, 1e6, 1e5, "AMD EPYC", {{"calibrated", 50e9, 1e12}}));
  RooflineChart chart;
  Document doc = Render(results, CeilingSource::kDatasheet, &chart);
  ASSERT_EQ(doc.error, "");
  std::set<std::string> texts;
  for (const auto* e : doc.All("text")) texts.insert(e->text);
  // Two devices: roofs named after their device, one line style each, both in the title.
  EXPECT_TRUE(texts.count("NVIDIA H100: memory 3.35 TB/s")) << ::testing::PrintToString(texts);
  EXPECT_TRUE(texts.count("NVIDIA H100: bf16 peak 67.0 TFLOP/s"));
  EXPECT_TRUE(texts.count("AMD EPYC: copy 50.0 GB/s"));
  EXPECT_TRUE(texts.count("AMD EPYC: f32 peak 1.00 TFLOP/s"));
  EXPECT_TRUE(texts.count("Roofline — NVIDIA H100, AMD EPYC"));
  EXPECT_TRUE(texts.count("NVIDIA H100"));  // In the legend: the source asked for goes unsaid.
  EXPECT_TRUE(texts.count("AMD EPYC (calibrated)"));
  EXPECT_THAT(chart.notes, ::testing::Contains(HasSubstr("AMD EPYC: no datasheet ceilings")));
  std::set<std::string> dashes;
  for (const auto* p : doc.All("polyline"))
    dashes.insert(p->attrs.count("stroke-dasharray") ? p->attrs.at("stroke-dasharray") : "solid");
  EXPECT_EQ(dashes.size(), 2u);
  // Several dtypes: the labels say which.
  EXPECT_TRUE(texts.count("cpu_naive 64x4096 f32"));
  ExpectInsideViewBox(doc);
}

TEST(RooflineSvg, TextIsEscaped) {
  std::vector<v1::Result> results = {
      MakeResult("custom<&>\"'", 8, v1::DTYPE_F32, 1e6, 1e6, 1e5, "GPU \"X\" & <Y>", {{"calibrated", 1e11, 1e12}})};
  Document doc = Render(results, CeilingSource::kCalibrated);
  ASSERT_EQ(doc.error, "");
  std::set<std::string> texts;
  for (const auto* e : doc.All("text")) texts.insert(e->text);
  EXPECT_TRUE(texts.count("custom<&>\"' 8x4096"));
  EXPECT_TRUE(texts.count("Roofline — GPU \"X\" & <Y>"));
}

TEST(RooflineSvg, ResultsWithoutFlopsAreLeftOutWithANote) {
  std::vector<v1::Result> results = Sample();
  results.push_back(MakeResult("copy", 8, v1::DTYPE_F32, 1e6, 0, 1e5, "NVIDIA H100", kH100));
  RooflineChart chart;
  Document doc = Render(results, CeilingSource::kCalibrated, &chart);
  EXPECT_EQ(doc.All("circle").size(), 3u);
  EXPECT_THAT(chart.notes, ::testing::Contains(HasSubstr("copy 8x4096 f32: no FLOPs or no time, not drawn")));
}

TEST(RooflineSvg, NothingToDrawIsAnError) {
  EXPECT_EQ(RenderRooflineSvg({}, CeilingSource::kCalibrated).status().code(), absl::StatusCode::kFailedPrecondition);
  std::vector<v1::Result> results = {Sample()[3], Sample()[4]};
  auto chart = RenderRooflineSvg(results, CeilingSource::kCalibrated);
  EXPECT_EQ(chart.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(chart.status().message(), HasSubstr("no OK result"));
}

TEST(RooflineSvg, ResultsWithoutCeilingsStillDrawTheirPoints) {
  std::vector<v1::Result> results = {MakeResult("v1", 8, v1::DTYPE_F32, 1e6, 1e6, 1e5, "cpu", {})};
  Document doc = Render(results, CeilingSource::kCalibrated);
  ASSERT_EQ(doc.error, "");
  EXPECT_EQ(doc.All("circle").size(), 1u);
  EXPECT_TRUE(doc.All("polyline").empty());
  ExpectInsideViewBox(doc);
}

TEST(CeilingSource, Parses) {
  EXPECT_EQ(*ParseCeilingSource("calibrated"), CeilingSource::kCalibrated);
  EXPECT_EQ(*ParseCeilingSource("datasheet"), CeilingSource::kDatasheet);
  EXPECT_FALSE(ParseCeilingSource("vendor").ok());
}

// --- The subcommand ---

class PlotCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"KBENCH_COORDINATOR", "KBENCH_TOKEN", "KBENCH_CONFIG"}) unsetenv(v);
    setenv("HOME", ::testing::TempDir().c_str(), 1);
    fake.AddJob("j-1", "rmsnorm");
    fake.results["j-1"] = Sample();
  }
  struct Outcome {
    int rc;
    std::string out, err;
  };
  Outcome Run(std::vector<std::string> args) {
    args.insert(args.begin(), {"--coordinator", server.address(), "plot"});
    std::ostringstream out, err;
    Io io{out, err};
    int rc = RunCli(args, io);
    return {rc, out.str(), err.str()};
  }

  testing::FakeServer server;
  testing::FakeCoordinator& fake = server.service;
};

TEST_F(PlotCommandTest, WritesTheSvgFile) {
  const std::string path = ::testing::TempDir() + "/plot_test_roofline.svg";
  std::remove(path.c_str());
  auto r = Run({"j-1", "-o", path});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, path + ": 3 results drawn\n");
  EXPECT_THAT(r.err, HasSubstr("not drawn: 1 INCORRECT, 1 SKIPPED"));
  std::ifstream f(path);
  std::stringstream svg;
  svg << f.rdbuf();
  Document doc = ParseXml(svg.str());
  EXPECT_EQ(doc.error, "");
  EXPECT_EQ(doc.All("circle").size(), 3u);
  EXPECT_FALSE(std::ifstream(path + ".tmp").good());
  std::remove(path.c_str());
}

TEST_F(PlotCommandTest, WritesToStdoutWithDash) {
  auto r = Run({"j-1", "--output", "-", "--ceiling", "datasheet"});
  ASSERT_EQ(r.rc, 0) << r.err;
  Document doc = ParseXml(r.out);
  EXPECT_EQ(doc.error, "");
  std::set<std::string> texts;
  for (const auto* e : doc.All("text")) texts.insert(e->text);
  EXPECT_TRUE(texts.count("memory 3.35 TB/s"));
  // Only the fake's GetResults was asked, without samples (the plot does not need them).
  ASSERT_EQ(fake.results_requests.size(), 1u);
  EXPECT_FALSE(fake.results_requests[0].include_samples());
}

TEST_F(PlotCommandTest, Errors) {
  EXPECT_EQ(Run({}).rc, 2);
  auto bad = Run({"j-1", "--ceiling", "vendor", "-o", "-"});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_THAT(bad.err, HasSubstr("--ceiling: 'vendor'"));
  auto missing = Run({"j-404", "-o", "-"});
  EXPECT_EQ(missing.rc, 1);
  EXPECT_THAT(missing.err, HasSubstr("j-404"));
  fake.AddJob("j-2", "rmsnorm");
  fake.results["j-2"] = {Sample()[3]};
  auto empty = Run({"j-2", "-o", "-"});
  EXPECT_EQ(empty.rc, 1);
  EXPECT_THAT(empty.err, HasSubstr("kbench-client: plot: no OK result"));
  EXPECT_EQ(empty.out, "");
  auto unwritable = Run({"j-1", "-o", ::testing::TempDir() + "/no/such/dir/x.svg"});
  EXPECT_EQ(unwritable.rc, 1);
  EXPECT_THAT(unwritable.err, HasSubstr("cannot write"));
}

TEST_F(PlotCommandTest, IsListedInTheHelp) {
  std::ostringstream out, err;
  Io io{out, err};
  EXPECT_EQ(RunCli({"--help"}, io), 0);
  EXPECT_THAT(out.str(), HasSubstr("plot "));
  std::ostringstream out2, err2;
  Io io2{out2, err2};
  EXPECT_EQ(RunCli({"help", "plot"}, io2), 0);
  EXPECT_THAT(out2.str(), HasSubstr("--ceiling SOURCE"));
  EXPECT_THAT(out2.str(), Not(HasSubstr("--format")));
}

}  // namespace
}  // namespace kbench::client

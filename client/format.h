// Rendering of results, jobs, workers and kernels as an aligned text table, a GitHub Markdown table,
// CSV (raw numbers, for machines) or JSON (the API messages themselves). Pure functions: no I/O and
// no clock (callers pass `now_ms`), so every format is unit-tested on hand-built messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "kbench/v1/catalog.pb.h"
#include "kbench/v1/coordinator.pb.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"

namespace kbench::client {

enum class Format { kTable, kMarkdown, kJson, kCsv };

// "table", "md" (or "markdown"), "json", "csv".
absl::StatusOr<Format> ParseFormat(absl::string_view name);

// A rectangular table before rendering.
struct Table {
  std::vector<std::string> header;
  std::vector<bool> numeric;  // Per column: right-aligned in text, `--:` in Markdown.
  std::vector<std::vector<std::string>> rows;
  // Rows that continue the previous row's group (another device of the same worker, another variant
  // of the same op): text and Markdown leave their first `group_columns` cells blank; CSV repeats them.
  std::vector<bool> continues;
  size_t group_columns = 0;

  void AddRow(std::vector<std::string> row, bool continues_group = false) {
    rows.push_back(std::move(row));
    continues.push_back(continues_group);
  }
};

std::string RenderText(const Table& t);        // Columns padded to width, a rule under the header.
std::string RenderMarkdown(const Table& t);    // | a | b | with a separator row; '|' in cells escaped.
std::string RenderCsv(const Table& t);         // RFC 4180: header line, then rows; quoted when needed.
std::string Render(const Table& t, Format f);  // kJson is not a table format; callers handle it.

// A JSON array with one message per line, via protobuf's JSON mapping (proto field names, every
// field printed, enums by name) so that keys are stable whatever the values.
std::string ToJsonArray(const std::vector<const google::protobuf::Message*>& messages);

// The first line of `text`, cut to `max` characters with "..." so that a compiler log or a long error
// cannot break a table; CSV and JSON keep the full text.
std::string Abbreviate(absl::string_view text, size_t max);

// The correctness cell: "ok", "FAIL max_rel=3.1e-02", or the status message of a SKIPPED/error result.
std::string CheckCell(const v1::Result& r);
// "j-abc RUNNING 5/12 rmsnorm cpu_naive 256x1024 bf16".
std::string ProgressLine(const v1::Job& job);

// Results: text and Markdown print one table per device, under a line naming the device and its
// calibrated copy bandwidth. `with_samples` adds min/p10/p90/max columns (text, md) or the raw
// samples (csv: a samples_ns column; json: the messages carry them).
std::string FormatResults(const std::vector<v1::Result>& results, Format format, bool with_samples);
std::string FormatJobs(const std::vector<v1::Job>& jobs, Format format, int64_t now_ms);
std::string FormatWorkers(const std::vector<v1::WorkerStatus>& workers, Format format, int64_t now_ms);
std::string FormatKernels(const std::vector<v1::OpInfo>& ops, Format format);
// One op's presets, a row per problem: the shape as --shape takes it (dims in the op's order, then the
// flags), its dtype when the preset fixes one; json: the PresetInfo messages.
std::string FormatPresets(const v1::OpInfo& op, Format format);
// The history of `op`'s series (GetHistory): text and Markdown print one table per series (variant,
// shape, dtype, device; newest point first) under a line naming it with its baseline median; csv one
// row per point with the series columns; json the response message.
std::string FormatHistory(absl::string_view op, const v1::GetHistoryResponse& history, Format format);
// The series (labelled as in FormatHistory) whose newest point is SLOWER than its baseline.
std::vector<std::string> RegressedSeries(absl::string_view op, const v1::GetHistoryResponse& history);
// Only the series whose newest point changed (SLOWER or FASTER), for `history --regressions`.
v1::GetHistoryResponse OnlyChanged(const v1::GetHistoryResponse& history);

}  // namespace kbench::client

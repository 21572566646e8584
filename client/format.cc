// Table rendering (text, Markdown, CSV) and the JSON array writer; see format.h.
#include "client/format.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "api/names.h"
#include "google/protobuf/util/json_util.h"

namespace kbench::client {
namespace {

// Width on a terminal: UTF-8 continuation bytes take no column ("±" is two bytes, one column).
size_t DisplayWidth(absl::string_view s) {
  return std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

std::string Cell(const Table& t, size_t row, size_t col) {
  if (col >= t.rows[row].size()) return "";
  if (col < t.group_columns && row < t.continues.size() && t.continues[row]) return "";
  return t.rows[row][col];
}

std::string MarkdownEscape(absl::string_view s) {
  return absl::StrReplaceAll(s, {{"|", "\\|"}, {"\r\n", " "}, {"\n", " "}});
}

std::string CsvField(absl::string_view s) {
  if (s.find_first_of(",\"\r\n") == absl::string_view::npos) return std::string(s);
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\"", "\"\""}}), "\"");
}

}  // namespace

absl::StatusOr<Format> ParseFormat(absl::string_view name) {
  std::string n = absl::AsciiStrToLower(name);
  if (n == "table" || n == "text") return Format::kTable;
  if (n == "md" || n == "markdown") return Format::kMarkdown;
  if (n == "json") return Format::kJson;
  if (n == "csv") return Format::kCsv;
  return absl::InvalidArgumentError(
      absl::StrCat("--format: unknown format '", name, "' (known: table, md, json, csv)"));
}

std::string Abbreviate(absl::string_view text, size_t max) {
  absl::string_view line = text.substr(0, text.find('\n'));
  line = absl::StripAsciiWhitespace(line);
  bool cut = line.size() < absl::StripAsciiWhitespace(text).size();
  if (line.size() > max) line = line.substr(0, max > 3 ? max - 3 : 0), cut = true;
  return cut ? absl::StrCat(line, "...") : std::string(line);
}

std::string RenderText(const Table& t) {
  const size_t cols = t.header.size();
  std::vector<size_t> width(cols);
  for (size_t c = 0; c < cols; ++c) {
    width[c] = DisplayWidth(t.header[c]);
    for (size_t r = 0; r < t.rows.size(); ++r) width[c] = std::max(width[c], DisplayWidth(Cell(t, r, c)));
  }
  auto line = [&](auto cell_at) {
    std::string s;
    for (size_t c = 0; c < cols; ++c) {
      std::string v = cell_at(c);
      std::string pad(width[c] - DisplayWidth(v), ' ');
      bool right = c < t.numeric.size() && t.numeric[c];
      if (c > 0) s += "  ";
      s += right ? pad + v : (c + 1 == cols ? v : v + pad);
    }
    // Left-aligned columns are padded; an empty trailing cell would leave blanks at the end.
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line([&](size_t c) { return t.header[c]; });
  out += line([&](size_t c) { return std::string(width[c], '-'); });
  for (size_t r = 0; r < t.rows.size(); ++r) out += line([&](size_t c) { return Cell(t, r, c); });
  return out;
}

std::string RenderMarkdown(const Table& t) {
  const size_t cols = t.header.size();
  std::string out = "|";
  for (const auto& h : t.header) absl::StrAppend(&out, " ", MarkdownEscape(h), " |");
  out += "\n|";
  for (size_t c = 0; c < cols; ++c) out += (c < t.numeric.size() && t.numeric[c]) ? "---:|" : "---|";
  out += "\n";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    out += "|";
    for (size_t c = 0; c < cols; ++c) absl::StrAppend(&out, " ", MarkdownEscape(Cell(t, r, c)), " |");
    out += "\n";
  }
  return out;
}

std::string RenderCsv(const Table& t) {
  auto join = [](const std::vector<std::string>& cells) {
    return absl::StrJoin(cells, ",", [](std::string* o, const std::string& s) { o->append(CsvField(s)); }) + "\n";
  };
  std::string out = join(t.header);
  for (const auto& row : t.rows) out += join(row);
  return out;
}

std::string Render(const Table& t, Format f) {
  switch (f) {
    case Format::kMarkdown:
      return RenderMarkdown(t);
    case Format::kCsv:
      return RenderCsv(t);
    default:
      return RenderText(t);
  }
}

std::string ToJsonArray(const std::vector<const google::protobuf::Message*>& messages) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  if (messages.empty()) return "[]\n";
  std::string out = "[\n";
  for (size_t i = 0; i < messages.size(); ++i) {
    std::string json;
    auto status = google::protobuf::util::MessageToJsonString(*messages[i], &json, options);
    if (!status.ok()) json = "null";  // Only possible for messages with unresolvable Any fields; we have none.
    absl::StrAppend(&out, json, i + 1 < messages.size() ? ",\n" : "\n");
  }
  return out + "]\n";
}

std::string ProgressLine(const v1::Job& job) {
  std::string s = absl::StrCat(job.job_id(), " ", api::JobStateName(job.state()));
  const auto& p = job.progress();
  if (p.results_total() > 0)
    absl::StrAppend(&s, " ", p.results_done(), "/", p.results_total());
  else if (p.results_done() > 0)
    absl::StrAppend(&s, " ", p.results_done(), "/?");
  absl::StrAppend(&s, " ", p.current().empty() ? job.spec().op() : p.current());
  return s;
}

}  // namespace kbench::client

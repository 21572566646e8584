// A small CSV reader for the client's format tests: RFC 4180 quoting, enough to read back what the
// client writes.
#pragma once

#include <string>
#include <vector>

namespace kbench::client::testing {

// A small RFC 4180 reader, to check that the CSV parses back.
inline std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"')
        cell += '"', ++i;
      else if (ch == '"')
        quoted = false;
      else
        cell += ch;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      rows.back().push_back(cell), cell.clear();
    } else if (ch == '\n') {
      rows.back().push_back(cell), cell.clear();
      rows.emplace_back();
    } else {
      cell += ch;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

}  // namespace kbench::client::testing

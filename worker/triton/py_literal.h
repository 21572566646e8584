// A reader for the small subset of Python literals a Triton launch description is written in
// (launch_description.h): dicts, lists and tuples, strings, integers, floats, True/False/None, and
// comments. No Python runs: the worker reads the description of a kernel file without an interpreter,
// so a cached kernel launches with none started.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kbench::worker {

struct PyValue {
  enum Kind { kNone, kBool, kInt, kFloat, kString, kList, kDict };
  Kind kind = kNone;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<PyValue> items;                          // kList (lists and tuples)
  std::vector<std::pair<std::string, PyValue>> dict;   // kDict, string keys in source order

  const PyValue* Get(absl::string_view key) const;     // kDict: the value of `key`, or null.
  std::string KindName() const;                        // "int", "str", "list", ...
};

// Parses one literal at the start of `text`; `consumed` gets how many bytes it took. INVALID_ARGUMENT
// naming the line and what was expected ("line 3: expected ':' after a dict key").
absl::StatusOr<PyValue> ParsePyLiteral(absl::string_view text, size_t* consumed, int first_line = 1);

}  // namespace kbench::worker

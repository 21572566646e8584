// Fuzz target: the JSON files that `kbench-client compare --base B --head H` reads (client/compare.cc)
// and the report it writes from them (client/format_compare.cc). The input is the base file's bytes,
// a line "----", then the head file's (no such line: both files are the input); the report's format
// follows the input's length. Never a crash, and the exit status is one of the documented 0, 1, 2.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "client/commands.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  static constexpr char kSeparator[] = "\n----\n";
  std::string base = input, head = input;
  if (size_t at = input.find(kSeparator); at != std::string::npos) {
    base = input.substr(0, at);
    head = input.substr(at + sizeof(kSeparator) - 1);
  }
  kbench::fuzz::MemFile base_file(base), head_file(head);
  static const char* kFormats[] = {"table", "md", "json", "csv"};
  const std::vector<std::string> argv = {"--base", base_file.path(), "--head", head_file.path(), "--format",
                                         kFormats[size % 4]};
  std::ostringstream out, err;
  kbench::client::Io io{out, err};
  const int exit_status = kbench::client::RunCompare(argv, kbench::client::ConnectionFlags{}, io);
  FUZZ_CHECK(exit_status == 0 || exit_status == 1 || exit_status == 2);
  return 0;
}

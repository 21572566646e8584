// Random identifiers: one process-wide generator behind a mutex, seeded from the OS by absl.
#include "server/coordinator/ids.h"

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace kbench::server {

std::string RandomId(absl::string_view prefix, int hex_chars) {
  static absl::Mutex mu(absl::kConstInit);
  static absl::BitGen* gen = new absl::BitGen();  // Never destroyed: ids may be made during shutdown.
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = absl::StrCat(prefix, "-");
  absl::MutexLock lock(&mu);
  for (int i = 0; i < hex_chars; ++i) out.push_back(kHex[absl::Uniform(*gen, 0, 16)]);
  return out;
}

}  // namespace kbench::server

// Fuzz target: reading the PEM files of TLS (proto/api/pem.cc: --tls-cert, --tls-key, --tls-client-ca
// and the client's --tls-ca). Any file contents give the contents back or an error naming the flag;
// never a crash, and only contents holding a PEM header are accepted, unchanged.
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "api/pem.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  kbench::fuzz::MemFile file(bytes);
  absl::StatusOr<std::string> pem = kbench::api::ReadPemFile(file.path(), "--tls-cert");
  if (!pem.ok()) {
    FUZZ_CHECK(absl::StartsWith(pem.status().message(), "--tls-cert: "));
    FUZZ_CHECK(!absl::StrContains(bytes, "-----BEGIN "));
    return 0;
  }
  FUZZ_CHECK(*pem == bytes);
  return 0;
}

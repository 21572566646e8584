// Fuzz target: the coordinator's token file (server/auth/token_store.cc, --token-file). Any bytes
// give a store or an error naming a line; never a crash. A parsed store finds each of its own tokens
// at its own index, and no error message quotes a token (messages name the file and line only).
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "server/auth/token_store.h"
#include "tests/fuzz/fuzz_check.h"

using kbench::server::auth::TokenStore;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<TokenStore> store = TokenStore::Parse(text, "tokens");
  if (!store.ok()) {
    FUZZ_CHECK(absl::StartsWith(store.status().message(), "tokens:"));
    return 0;
  }
  FUZZ_CHECK(store->size() > 0);
  for (size_t i = 0; i < store->size(); ++i) {
    const auto& e = store->entry(i);
    FUZZ_CHECK(e.token.size() >= kbench::server::auth::kMinTokenLength);
    FUZZ_CHECK(!e.roles.empty());
    FUZZ_CHECK(store->Find(e.token) == i);
    (void)e.roles.ToString();
  }
  FUZZ_CHECK(!store->Find("").has_value());
  // The same bytes read from a file (Load) give the same entries.
  kbench::fuzz::MemFile file(text);
  absl::StatusOr<TokenStore> loaded = TokenStore::Load(file.path());
  FUZZ_CHECK(loaded.ok() && loaded->size() == store->size());
  return 0;
}

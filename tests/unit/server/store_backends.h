// The store backends the parameterized server suites run on: SQLite on a temporary file and
// PostgreSQL on a fresh database of the shared test server (postgres_fixture.h). The PostgreSQL one
// fails (never skips) when the server binaries are missing: CI installs them.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/store.h"

namespace kbench::server::testing {

struct StoreBackend {
  std::string name;
  // A fresh, empty location for one test.
  std::function<absl::StatusOr<std::string>()> new_location;
  // Opens the store at a location; opening the same location again must see the same data.
  std::function<absl::StatusOr<std::unique_ptr<Store>>(const std::string& location)> open;
  // Migration tests: brings a location's schema to an older `version` (as a coordinator of that
  // version left it; no further) and runs one statement on it with `blob` bound to ?1 (SQLite's
  // placeholder; PostgreSQL's $1 is substituted).
  std::function<absl::Status(const std::string& location, int version, const std::string& sql,
                             const std::string& blob)>
      seed_old;
};

// Names the backend in test output instead of dumping its bytes.
inline void PrintTo(const StoreBackend& b, std::ostream* os) { *os << b.name; }

StoreBackend SqliteBackend();
StoreBackend PostgresBackend(int pool_size = 4);

}  // namespace kbench::server::testing

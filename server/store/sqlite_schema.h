// The SQLite schema of the coordinator and its migrations. The schema_version table holds the
// version applied; opening a database applies every later migration in one transaction.
#pragma once

#include <sqlite3.h>

#include "absl/status/status.h"

namespace kbench::server::sqlite {

// The version this build writes.
int CurrentSchemaVersion();

// Creates or upgrades the schema. FAILED_PRECONDITION when the database is newer than this build.
absl::Status Migrate(sqlite3* db);

}  // namespace kbench::server::sqlite

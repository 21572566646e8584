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
// Upgrades the schema to `version` only (at most CurrentSchemaVersion()): tests build a database as an
// older coordinator left it, to migrate it from there. Nothing is done at or past that version.
absl::Status MigrateTo(sqlite3* db, int version);

}  // namespace kbench::server::sqlite

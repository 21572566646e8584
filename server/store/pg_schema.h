// The PostgreSQL schema of the coordinator and its migrations: the same logical schema as SQLite's
// (sqlite_schema.h), step for step and version for version. Replicas that start together migrate one
// at a time (a transaction-scoped advisory lock); DDL is transactional, so a failed step leaves the
// previous version intact.
#pragma once

#include "absl/status/status.h"
#include "server/store/pg_util.h"

namespace kbench::server::pg {

// The version this build writes.
int CurrentSchemaVersion();

// Creates or upgrades the schema. FAILED_PRECONDITION when the database is newer than this build.
absl::Status Migrate(Connection& conn);
// Upgrades the schema to `version` only (at most CurrentSchemaVersion()): tests build a database as an
// older coordinator left it, to migrate it from there. Nothing is done at or past that version.
absl::Status MigrateTo(Connection& conn, int version);

}  // namespace kbench::server::pg

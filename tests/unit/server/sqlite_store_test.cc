// What is particular to the SQLite store: WAL mode, the schema version, refusing a newer schema, and
// the in-memory database.
#include <sqlite3.h>

#include "fixtures.h"
#include "gtest/gtest.h"
#include "server/store/sqlite_schema.h"
#include "server/store/sqlite_store.h"

namespace kbench::server {
namespace {

// Runs one query on a separate connection and returns the first column of its first row as text.
std::string QueryText(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

TEST(SqliteStore, OpensInWalModeAndRecordsTheSchemaVersion) {
  const std::string path = testing::TempDbPath();
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
  }
  EXPECT_EQ(QueryText(path, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(QueryText(path, "SELECT version FROM schema_version"), std::to_string(sqlite::CurrentSchemaVersion()));
  // Opening again migrates nothing and keeps one version row.
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  EXPECT_EQ(QueryText(path, "SELECT COUNT(*) FROM schema_version"), "1");
}

TEST(SqliteStore, RefusesADatabaseFromANewerCoordinator) {
  const std::string path = testing::TempDbPath();
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  QueryText(path, "UPDATE schema_version SET version = 999");
  auto store = SqliteStore::Open(path);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("999"), absl::string_view::npos);
}

TEST(SqliteStore, InMemoryDatabaseWorks) {
  auto store = SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.ok()) << store.status();
  v1::Job job;
  job.set_job_id("j-1");
  job.set_state(v1::QUEUED);
  ASSERT_TRUE((*store)->InsertJob(job).ok());
  EXPECT_EQ((*store)->GetJob("j-1")->state(), v1::QUEUED);
}

TEST(SqliteStore, UnopenablePathIsAnError) {
  auto store = SqliteStore::Open("/nonexistent-dir/for/sure/kbench.db");
  EXPECT_FALSE(store.ok());
}

}  // namespace
}  // namespace kbench::server

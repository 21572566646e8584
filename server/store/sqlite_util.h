// Thin RAII helpers over the SQLite C API: prepared statements with typed binds and reads, and a
// transaction guard that rolls back unless committed. Errors become absl::Status with SQLite's text.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include <sqlite3.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kbench::server::sqlite {

// The SQLite error of db as a Status; SQLITE_CONSTRAINT becomes ALREADY_EXISTS, a full disk
// (SQLITE_FULL) RESOURCE_EXHAUSTED and an I/O error UNAVAILABLE, both naming the database file.
absl::Status Error(sqlite3* db, int rc, absl::string_view what);

// Runs SQL text that returns no rows (may hold several statements).
absl::Status Exec(sqlite3* db, const char* sql);

// Prepared statements of one connection kept for reuse, keyed by their SQL text, so that a hot query
// is parsed once. Use it only under the connection's lock; destroy it before closing the connection.
class StatementCache {
 public:
  explicit StatementCache(sqlite3* db) : db_(db) {}
  ~StatementCache();
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

 private:
  friend class Statement;
  friend class Transaction;
  // A statement for sql, taken out of the cache (so that two live Statements never share one), or null.
  sqlite3_stmt* Take(const std::string& sql);
  void Give(const std::string& sql, sqlite3_stmt* stmt);

  sqlite3* db_;
  std::unordered_multimap<std::string, sqlite3_stmt*> free_;
};

class Statement {
 public:
  Statement(sqlite3* db, absl::string_view sql);
  // Borrows a prepared statement from the cache (preparing one when none is free) and gives it back,
  // reset, when destroyed.
  Statement(StatementCache* cache, absl::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Preparation error, if any; binds and steps on a failed statement return it again.
  const absl::Status& status() const { return status_; }

  // Parameters are 1-based, as in SQLite.
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& BindText(int index, absl::string_view value);
  Statement& BindBlob(int index, absl::string_view value);
  Statement& BindNull(int index);

  // true: a row is ready; false: done.
  absl::StatusOr<bool> Step();
  // Runs to completion, ignoring rows.
  absl::Status Run();
  // Makes the statement ready to run again with new bindings (all cleared to NULL).
  void Reset();

  // Columns are 0-based, as in SQLite.
  int64_t Int(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;
  std::string Blob(int column) const;
  // The blob without a copy, valid until the next Step, Reset or destruction.
  absl::string_view BlobView(int column) const;
  bool IsNull(int column) const;

 private:
  sqlite3* db_;
  StatementCache* cache_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  absl::Status status_;
  std::string sql_;
};

// BEGIN IMMEDIATE on construction (takes the write lock up front, so that a read-then-write such as
// a lease cannot interleave with another writer); ROLLBACK on destruction unless Commit() succeeded.
class Transaction {
 public:
  explicit Transaction(sqlite3* db);
  // The same, with BEGIN and COMMIT prepared once in cache (a store makes one transaction per call).
  explicit Transaction(StatementCache* cache);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  const absl::Status& status() const { return status_; }
  absl::Status Commit();

 private:
  absl::Status Run(const char* sql);

  sqlite3* db_;
  StatementCache* cache_ = nullptr;
  absl::Status status_;
  bool open_ = false;
};

}  // namespace kbench::server::sqlite

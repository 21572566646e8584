// Implementation of the SQLite helpers.
#include "server/store/sqlite_util.h"

#include "absl/strings/str_cat.h"

namespace kbench::server::sqlite {

namespace {

// The status for an SQLite result code. A full disk or a failing one is the operator's to fix, not a
// bug: RESOURCE_EXHAUSTED and UNAVAILABLE, naming the database file, so that a caller sees what to free.
absl::Status StatusOf(sqlite3* db, int rc, std::string msg) {
  const char* file = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
  const std::string where = file != nullptr && *file != '\0' ? absl::StrCat(" (database ", file, ")") : "";
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
      return absl::AlreadyExistsError(msg);
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(absl::StrCat(msg, where, "; free space on the database's disk"));
    case SQLITE_IOERR:
      return absl::UnavailableError(absl::StrCat(msg, where, "; check the database's disk"));
    default:
      return absl::InternalError(msg);
  }
}

}  // namespace

absl::Status Error(sqlite3* db, int rc, absl::string_view what) {
  std::string msg = absl::StrCat("sqlite: ", what, ": ", sqlite3_errstr(rc));
  if (db != nullptr && sqlite3_errcode(db) == rc) absl::StrAppend(&msg, " (", sqlite3_errmsg(db), ")");
  return StatusOf(db, rc, std::move(msg));
}

absl::Status Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return absl::OkStatus();
  std::string msg = absl::StrCat("sqlite: ", err != nullptr ? err : sqlite3_errstr(rc), " in: ", sql);
  sqlite3_free(err);
  return StatusOf(db, rc, std::move(msg));
}

StatementCache::~StatementCache() {
  for (auto& [sql, stmt] : free_) sqlite3_finalize(stmt);
}

sqlite3_stmt* StatementCache::Take(const std::string& sql) {
  auto it = free_.find(sql);
  if (it == free_.end()) return nullptr;
  sqlite3_stmt* stmt = it->second;
  free_.erase(it);
  return stmt;
}

void StatementCache::Give(const std::string& sql, sqlite3_stmt* stmt) { free_.emplace(sql, stmt); }

Statement::Statement(sqlite3* db, absl::string_view sql) : db_(db), sql_(sql) {
  const int rc = sqlite3_prepare_v2(db_, sql_.data(), static_cast<int>(sql_.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) status_ = Error(db_, rc, absl::StrCat("prepare ", sql_));
}

Statement::Statement(StatementCache* cache, absl::string_view sql) : db_(cache->db_), cache_(cache), sql_(sql) {
  stmt_ = cache_->Take(sql_);
  if (stmt_ != nullptr) return;
  const int rc = sqlite3_prepare_v2(db_, sql_.data(), static_cast<int>(sql_.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) status_ = Error(db_, rc, absl::StrCat("prepare ", sql_));
}

Statement::~Statement() {
  if (cache_ != nullptr && stmt_ != nullptr) {
    // Reset ends the statement's read of the database, so a cached statement holds no snapshot.
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    cache_->Give(sql_, stmt_);
    return;
  }
  sqlite3_finalize(stmt_);
}

Statement& Statement::Bind(int index, int64_t value) {
  if (status_.ok()) {
    const int rc = sqlite3_bind_int64(stmt_, index, value);
    if (rc != SQLITE_OK) status_ = Error(db_, rc, "bind");
  }
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  if (status_.ok()) {
    const int rc = sqlite3_bind_double(stmt_, index, value);
    if (rc != SQLITE_OK) status_ = Error(db_, rc, "bind");
  }
  return *this;
}

Statement& Statement::BindText(int index, absl::string_view value) {
  if (status_.ok()) {
    const int rc = sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) status_ = Error(db_, rc, "bind");
  }
  return *this;
}

Statement& Statement::BindBlob(int index, absl::string_view value) {
  if (status_.ok()) {
    // A zero-length blob must still be a blob, not NULL: pass a non-null pointer.
    const int rc = sqlite3_bind_blob(stmt_, index, value.empty() ? "" : value.data(), static_cast<int>(value.size()),
                                     SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) status_ = Error(db_, rc, "bind");
  }
  return *this;
}

Statement& Statement::BindNull(int index) {
  if (status_.ok()) {
    const int rc = sqlite3_bind_null(stmt_, index);
    if (rc != SQLITE_OK) status_ = Error(db_, rc, "bind");
  }
  return *this;
}

absl::StatusOr<bool> Statement::Step() {
  if (!status_.ok()) return status_;
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  status_ = Error(db_, rc, absl::StrCat("step ", sql_));
  return status_;
}

absl::Status Statement::Run() {
  while (true) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

void Statement::Reset() {
  if (stmt_ == nullptr) return;  // Preparation failed: status_ keeps saying so.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  status_ = absl::OkStatus();
}

int64_t Statement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::Double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::Text(int column) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return p == nullptr ? std::string() : std::string(p, sqlite3_column_bytes(stmt_, column));
}

std::string Statement::Blob(int column) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  return p == nullptr ? std::string() : std::string(p, sqlite3_column_bytes(stmt_, column));
}

absl::string_view Statement::BlobView(int column) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  return p == nullptr ? absl::string_view() : absl::string_view(p, sqlite3_column_bytes(stmt_, column));
}

bool Statement::IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

Transaction::Transaction(sqlite3* db) : db_(db) {
  status_ = Run("BEGIN IMMEDIATE");
  open_ = status_.ok();
}

Transaction::Transaction(StatementCache* cache) : db_(cache->db_), cache_(cache) {
  status_ = Run("BEGIN IMMEDIATE");
  open_ = status_.ok();
}

Transaction::~Transaction() {
  if (open_) (void)Exec(db_, "ROLLBACK");
}

absl::Status Transaction::Run(const char* sql) {
  if (cache_ == nullptr) return Exec(db_, sql);
  Statement q(cache_, sql);
  return q.Run();
}

absl::Status Transaction::Commit() {
  if (!status_.ok()) return status_;
  absl::Status s = Run("COMMIT");
  if (s.ok()) open_ = false;
  return s;
}

}  // namespace kbench::server::sqlite

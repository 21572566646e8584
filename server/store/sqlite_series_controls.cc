// SqliteStore's admin controls of the series (series_controls.h in server/coordinator): recorded,
// never edited, read back in id order.
#include "server/store/sqlite_store.h"
#include "server/store/sqlite_util.h"

namespace kbench::server {

using sqlite::Statement;

absl::StatusOr<v1::SeriesControl> SqliteStore::InsertSeriesControl(const v1::SeriesControl& control) {
  v1::SeriesControl out = control;
  out.clear_id();
  uint64_t ticket = 0;
  {
    absl::MutexLock lock(&mu_);
    const int64_t changes_before = sqlite3_total_changes64(db_);
    Statement q(statements_.get(), R"sql(
INSERT INTO series_controls (op, kind, control, set_by, set_ms) VALUES (?1, ?2, ?3, ?4, ?5))sql");
    q.BindText(1, out.scope().op())
        .Bind(2, int64_t{out.kind()})
        .BindBlob(3, out.SerializeAsString())
        .BindText(4, out.set_by())
        .Bind(5, out.set_unix_ms());
    if (absl::Status s = q.Run(); !s.ok()) return s;
    out.set_id(sqlite3_last_insert_rowid(db_));
    ticket = Committed(changes_before);
  }
  if (absl::Status s = Durable(ticket); !s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<v1::SeriesControl>> SqliteStore::ListSeriesControls(absl::string_view op) {
  absl::MutexLock lock(&mu_);
  Statement q(statements_.get(), "SELECT id, control FROM series_controls WHERE ?1 = '' OR op = ?1 ORDER BY id");
  q.BindText(1, op);
  std::vector<v1::SeriesControl> out;
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    v1::SeriesControl& c = out.emplace_back();
    if (!c.ParseFromString(q.Blob(1))) return absl::DataLossError("stored series control does not parse");
    c.set_id(q.Int(0));
  }
  return out;
}

}  // namespace kbench::server

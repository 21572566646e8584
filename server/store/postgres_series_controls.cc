// PostgresStore's admin controls of the series (series_controls.h in server/coordinator): recorded,
// never edited, read back in id order.
#include "server/store/postgres_store.h"

namespace kbench::server {

using pg::Connection;
using pg::Params;
using pg::Rows;

absl::StatusOr<v1::SeriesControl> PostgresStore::InsertSeriesControl(const v1::SeriesControl& control) {
  v1::SeriesControl out = control;
  out.clear_id();
  absl::StatusOr<int64_t> id = Read([&](Connection& c) -> absl::StatusOr<int64_t> {
    absl::StatusOr<Rows> r = c.Query(R"sql(
INSERT INTO series_controls (op, kind, control, set_by, set_ms) VALUES ($1, $2, $3, $4, $5) RETURNING id)sql",
                                     Params()
                                         .Text(out.scope().op())
                                         .Int(out.kind())
                                         .Bytes(out.SerializeAsString())
                                         .Text(out.set_by())
                                         .Int(out.set_unix_ms()));
    if (!r.ok()) return r.status();
    if (r->size() != 1) return absl::InternalError("series control insert returned no id");
    return r->Int(0, 0);
  });
  if (!id.ok()) return id.status();
  out.set_id(*id);
  return out;
}

absl::StatusOr<std::vector<v1::SeriesControl>> PostgresStore::ListSeriesControls(absl::string_view op) {
  return Read([&](Connection& c) -> absl::StatusOr<std::vector<v1::SeriesControl>> {
    absl::StatusOr<Rows> r =
        c.Query("SELECT id, control FROM series_controls WHERE $1 = '' OR op = $1 ORDER BY id", Params().Text(op));
    if (!r.ok()) return r.status();
    std::vector<v1::SeriesControl> out;
    for (int i = 0; i < r->size(); ++i) {
      v1::SeriesControl& sc = out.emplace_back();
      if (!sc.ParseFromString(r->Text(i, 1))) return absl::DataLossError("stored series control does not parse");
      sc.set_id(r->Int(i, 0));
    }
    return out;
  });
}

}  // namespace kbench::server

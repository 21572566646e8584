// Schema migrations, oldest first. Never edit a released step: append a new one, so that every
// existing database reaches the same schema.
#include "server/store/sqlite_schema.h"

#include <array>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/store/result_columns.h"
#include "server/store/sqlite_util.h"

namespace kbench::server::sqlite {
namespace {

// Step i brings the schema from version i to version i + 1.
constexpr std::array<const char*, 4> kMigrations = {
    // 1: jobs, results, workers.
    R"sql(
CREATE TABLE jobs (
  job_id            TEXT PRIMARY KEY,
  idempotency_key   TEXT UNIQUE,              -- NULL when the submission carried none.
  spec              BLOB NOT NULL,            -- Serialized kbench.v1.JobSpec, resolved against the catalog.
  state             INTEGER NOT NULL,         -- kbench.v1.JobState.
  attempts          INTEGER NOT NULL DEFAULT 0,
  worker_id         TEXT NOT NULL DEFAULT '',
  lease_id          TEXT NOT NULL DEFAULT '', -- Non-empty while a worker holds the job.
  lease_expires_ms  INTEGER NOT NULL DEFAULT 0,
  created_ms        INTEGER NOT NULL,
  started_ms        INTEGER NOT NULL DEFAULT 0,
  finished_ms       INTEGER NOT NULL DEFAULT 0,
  error             TEXT NOT NULL DEFAULT '',
  progress          BLOB                      -- Serialized kbench.v1.Progress.
);
CREATE INDEX jobs_by_state ON jobs(state, created_ms);
CREATE INDEX jobs_by_created ON jobs(created_ms);
CREATE INDEX jobs_by_lease ON jobs(lease_id);
CREATE INDEX jobs_by_worker ON jobs(worker_id, lease_id);

CREATE TABLE results (
  job_id         TEXT NOT NULL REFERENCES jobs(job_id),
  attempt        INTEGER NOT NULL,
  idx            INTEGER NOT NULL,
  op             TEXT NOT NULL,
  variant        TEXT NOT NULL,
  problem_label  TEXT NOT NULL,
  dtype          INTEGER NOT NULL,           -- kbench.v1.Dtype.
  status         INTEGER NOT NULL,           -- kbench.v1.ResultStatus.
  median_ns      REAL,
  result         BLOB NOT NULL,              -- Serialized kbench.v1.Result with raw samples.
  PRIMARY KEY (job_id, attempt, idx)
);
CREATE INDEX results_by_series ON results(op, variant, problem_label, dtype);

CREATE TABLE workers (
  worker_id          TEXT PRIMARY KEY,
  info               BLOB NOT NULL,          -- Serialized kbench.v1.WorkerInfo.
  last_heartbeat_ms  INTEGER NOT NULL,
  state              TEXT NOT NULL DEFAULT 'idle',
  current_job_id     TEXT NOT NULL DEFAULT ''
);
)sql",
    // 2: series columns and regression verdicts on results, samples apart from the message, and the
    // latest tracked point of each series. Rows from version 1 keep empty series columns (they join
    // no baseline) and their samples inside the message (samples IS NULL).
    R"sql(
ALTER TABLE results ADD COLUMN shape TEXT NOT NULL DEFAULT '';     -- SeriesShape() of the problem.
ALTER TABLE results ADD COLUMN gpu_model TEXT NOT NULL DEFAULT ''; -- Device name of the result.
ALTER TABLE results ADD COLUMN branch TEXT NOT NULL DEFAULT '';    -- The job's "branch" label.
ALTER TABLE results ADD COLUMN git_sha TEXT NOT NULL DEFAULT '';   -- The job's "git_sha" label.
ALTER TABLE results ADD COLUMN finished_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN utilization REAL;                   -- NULL when unknown.
ALTER TABLE results ADD COLUMN samples BLOB;                       -- Sorted, packed; NULL: inside result.
ALTER TABLE results ADD COLUMN samples_order BLOB;                 -- Permutation back to the order taken.
ALTER TABLE results ADD COLUMN verdict INTEGER NOT NULL DEFAULT 0; -- kbench.v1.Verdict.
ALTER TABLE results ADD COLUMN change_fraction REAL NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN p_value REAL NOT NULL DEFAULT 1;
ALTER TABLE results ADD COLUMN baseline_median_ns REAL NOT NULL DEFAULT 0;
DROP INDEX results_by_series;  -- Superseded by results_by_baseline.
CREATE INDEX results_by_baseline ON results(op, variant, shape, dtype, gpu_model, branch, status, finished_ms);
CREATE INDEX results_by_history ON results(op, status, finished_ms);

CREATE TABLE series (
  op           TEXT NOT NULL,
  variant      TEXT NOT NULL,
  shape        TEXT NOT NULL,
  dtype        INTEGER NOT NULL,
  gpu_model    TEXT NOT NULL,
  job_id       TEXT NOT NULL,               -- Job of the latest tracked result.
  finished_ms  INTEGER NOT NULL,
  median_ns    REAL NOT NULL,
  utilization  REAL,
  verdict      INTEGER NOT NULL,
  PRIMARY KEY (op, variant, shape, dtype, gpu_model)
);
)sql",
    // 3: the series key's measurement columns. Rows before it were COLD with one launch per sample,
    // except those whose shape ended in " hot" (the old key's suffix): HOT, the suffix dropped. Their
    // hot batch and backend come from the stored message (BackfillSeriesColumns, then kSeriesFromResults).
    R"sql(
ALTER TABLE results ADD COLUMN cache_mode INTEGER NOT NULL DEFAULT 1;  -- kbench.v1.CacheMode: COLD.
ALTER TABLE results ADD COLUMN hot_batch INTEGER NOT NULL DEFAULT 1;   -- Launches per sample; 1 for COLD.
ALTER TABLE results ADD COLUMN backend INTEGER NOT NULL DEFAULT 0;     -- kbench.v1.Backend; 0: not reported.
UPDATE results SET cache_mode = 2, shape = substr(shape, 1, length(shape) - 4) WHERE shape LIKE '% hot';
DROP INDEX results_by_baseline;
CREATE INDEX results_by_baseline
  ON results(op, variant, shape, dtype, gpu_model, cache_mode, hot_batch, backend, branch, status, finished_ms);

CREATE TABLE series_v3 (
  op           TEXT NOT NULL,
  variant      TEXT NOT NULL,
  shape        TEXT NOT NULL,
  dtype        INTEGER NOT NULL,
  gpu_model    TEXT NOT NULL,
  cache_mode   INTEGER NOT NULL,
  hot_batch    INTEGER NOT NULL,
  backend      INTEGER NOT NULL,
  job_id       TEXT NOT NULL,
  finished_ms  INTEGER NOT NULL,
  median_ns    REAL NOT NULL,
  utilization  REAL,
  verdict      INTEGER NOT NULL,
  PRIMARY KEY (op, variant, shape, dtype, gpu_model, cache_mode, hot_batch, backend)
);
INSERT INTO series_v3
SELECT op, variant, CASE WHEN shape LIKE '% hot' THEN substr(shape, 1, length(shape) - 4) ELSE shape END, dtype,
       gpu_model, CASE WHEN shape LIKE '% hot' THEN 2 ELSE 1 END, 1, 0, job_id, finished_ms, median_ns,
       utilization, verdict
FROM series;
DROP TABLE series;
ALTER TABLE series_v3 RENAME TO series;
)sql",
    // 4: admin controls of the series (threshold overrides, mutes, known steps), never edited.
    R"sql(
CREATE TABLE series_controls (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,  -- Never reused: the latest control is the greatest id.
  op       TEXT NOT NULL,                      -- The scope's op.
  kind     INTEGER NOT NULL,                   -- kbench.v1.SeriesControlKind.
  control  BLOB NOT NULL,                      -- Serialized kbench.v1.SeriesControl (without its id).
  set_by   TEXT NOT NULL,                      -- The admin token's name.
  set_ms   INTEGER NOT NULL
);
CREATE INDEX series_controls_by_op ON series_controls(op, id);
)sql",
};

// After step 3's backfill: each series point takes its hot batch and backend from its result.
constexpr const char* kSeriesFromResults = R"sql(
UPDATE series SET (hot_batch, backend) = (
  SELECT r.hot_batch, r.backend FROM results r
  WHERE r.job_id = series.job_id AND r.op = series.op AND r.variant = series.variant AND r.shape = series.shape
    AND r.dtype = series.dtype AND r.gpu_model = series.gpu_model AND r.cache_mode = series.cache_mode
  ORDER BY r.finished_ms DESC LIMIT 1)
WHERE EXISTS (
  SELECT 1 FROM results r
  WHERE r.job_id = series.job_id AND r.op = series.op AND r.variant = series.variant AND r.shape = series.shape
    AND r.dtype = series.dtype AND r.gpu_model = series.gpu_model AND r.cache_mode = series.cache_mode))sql";

// Step 3's backfill: each older row's hot batch and backend, read from its stored message.
absl::Status BackfillSeriesColumns(sqlite3* db) {
  // Read first, then write: no row is updated under an open scan of its table.
  std::vector<std::pair<int64_t, LegacySeriesColumns>> columns;
  {
    Statement rows(db, "SELECT rowid, result, cache_mode FROM results");
    while (true) {
      absl::StatusOr<bool> row = rows.Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      columns.emplace_back(rows.Int(0),
                           LegacySeriesColumnsOf(rows.BlobView(1), static_cast<v1::CacheMode>(rows.Int(2))));
    }
  }
  Statement set(db, "UPDATE results SET hot_batch = ?1, backend = ?2 WHERE rowid = ?3");
  for (const auto& [rowid, c] : columns) {
    set.Reset();
    set.Bind(1, int64_t{c.hot_batch}).Bind(2, int64_t{c.backend}).Bind(3, rowid);
    if (absl::Status s = set.Run(); !s.ok()) return s;
  }
  return Exec(db, kSeriesFromResults);
}

}  // namespace

int CurrentSchemaVersion() { return static_cast<int>(kMigrations.size()); }

absl::Status Migrate(sqlite3* db) { return MigrateTo(db, CurrentSchemaVersion()); }

absl::Status MigrateTo(sqlite3* db, int target) {
  if (target > CurrentSchemaVersion()) return absl::InvalidArgumentError("schema version: beyond this build's");
  Transaction tx(db);
  if (!tx.status().ok()) return tx.status();
  if (absl::Status s = Exec(db, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"); !s.ok())
    return s;
  int version = 0;
  bool has_row = false;
  {
    Statement q(db, "SELECT version FROM schema_version");
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (*row) {
      has_row = true;
      version = static_cast<int>(q.Int(0));
    }
  }
  if (version > CurrentSchemaVersion())
    return absl::FailedPreconditionError(absl::StrCat("database schema version ", version,
                                                      " is newer than this coordinator's (", CurrentSchemaVersion(),
                                                      "); upgrade the coordinator"));
  if (version >= target) return tx.Commit();
  for (int v = version; v < target; ++v) {
    if (absl::Status s = Exec(db, kMigrations[v]); !s.ok()) return s;
    if (v == 2)
      if (absl::Status s = BackfillSeriesColumns(db); !s.ok()) return s;
  }
  Statement set(db, has_row ? "UPDATE schema_version SET version = ?1" : "INSERT INTO schema_version VALUES (?1)");
  set.Bind(1, int64_t{target});
  if (absl::Status s = set.Run(); !s.ok()) return s;
  return tx.Commit();
}

}  // namespace kbench::server::sqlite

// Schema migrations, oldest first. Never edit a released step: append a new one (and its SQLite twin).
// Integer columns are BIGINT and blobs BYTEA; seq columns stand in for SQLite's rowid where order
// of insertion breaks ties.
#include "server/store/pg_schema.h"

#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/store/result_columns.h"

namespace kbench::server::pg {
namespace {

// Any constant the coordinator alone uses: serializes migrations of replicas starting together.
constexpr int64_t kMigrationLockKey = 0x6b62656e6368;  // "kbench"

// Step i brings the schema from version i to version i + 1.
constexpr std::array<const char*, 5> kMigrations = {
    // 1: jobs, results, workers.
    R"sql(
CREATE TABLE jobs (
  job_id            TEXT PRIMARY KEY,
  idempotency_key   TEXT UNIQUE,               -- NULL when the submission carried none.
  spec              BYTEA NOT NULL,            -- Serialized kbench.v1.JobSpec, resolved against the catalog.
  state             BIGINT NOT NULL,           -- kbench.v1.JobState.
  attempts          BIGINT NOT NULL DEFAULT 0,
  worker_id         TEXT NOT NULL DEFAULT '',
  lease_id          TEXT NOT NULL DEFAULT '',  -- Non-empty while a worker holds the job.
  lease_expires_ms  BIGINT NOT NULL DEFAULT 0,
  created_ms        BIGINT NOT NULL,
  started_ms        BIGINT NOT NULL DEFAULT 0,
  finished_ms       BIGINT NOT NULL DEFAULT 0,
  error             TEXT NOT NULL DEFAULT '',
  progress          BYTEA,                     -- Serialized kbench.v1.Progress.
  seq               BIGSERIAL NOT NULL         -- Insertion order.
);
CREATE INDEX jobs_by_state ON jobs(state, created_ms, seq);
CREATE INDEX jobs_by_created ON jobs(created_ms);
CREATE INDEX jobs_by_lease ON jobs(lease_id);
CREATE INDEX jobs_by_worker ON jobs(worker_id, lease_id);

CREATE TABLE results (
  job_id         TEXT NOT NULL REFERENCES jobs(job_id),
  attempt        BIGINT NOT NULL,
  idx            BIGINT NOT NULL,
  op             TEXT NOT NULL,
  variant        TEXT NOT NULL,
  problem_label  TEXT NOT NULL,
  dtype          BIGINT NOT NULL,            -- kbench.v1.Dtype.
  status         BIGINT NOT NULL,            -- kbench.v1.ResultStatus.
  median_ns      DOUBLE PRECISION,
  result         BYTEA NOT NULL,             -- Serialized kbench.v1.Result.
  seq            BIGSERIAL NOT NULL,
  PRIMARY KEY (job_id, attempt, idx)
);
CREATE INDEX results_by_series ON results(op, variant, problem_label, dtype);

CREATE TABLE workers (
  worker_id          TEXT PRIMARY KEY,
  info               BYTEA NOT NULL,          -- Serialized kbench.v1.WorkerInfo.
  last_heartbeat_ms  BIGINT NOT NULL,
  state              TEXT NOT NULL DEFAULT 'idle',
  current_job_id     TEXT NOT NULL DEFAULT '',
  seq                BIGSERIAL NOT NULL        -- First registration order.
);
)sql",
    // 2: series columns and regression verdicts on results, samples apart from the message, and the
    // latest tracked point of each series.
    R"sql(
ALTER TABLE results
  ADD COLUMN shape TEXT NOT NULL DEFAULT '',
  ADD COLUMN gpu_model TEXT NOT NULL DEFAULT '',
  ADD COLUMN branch TEXT NOT NULL DEFAULT '',
  ADD COLUMN git_sha TEXT NOT NULL DEFAULT '',
  ADD COLUMN finished_ms BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN utilization DOUBLE PRECISION,
  ADD COLUMN samples BYTEA,         -- Sorted little-endian doubles; NULL: inside result (rows of version 1).
  ADD COLUMN samples_order BYTEA,   -- Little-endian uint32 per sample: the permutation back to the order taken.
  ADD COLUMN verdict BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN change_fraction DOUBLE PRECISION NOT NULL DEFAULT 0,
  ADD COLUMN p_value DOUBLE PRECISION NOT NULL DEFAULT 1,
  ADD COLUMN baseline_median_ns DOUBLE PRECISION NOT NULL DEFAULT 0;
DROP INDEX results_by_series;  -- Superseded by results_by_baseline.
-- Both end in the ORDER BY of their query (finished_ms DESC, seq DESC), so that a LIMIT reads no more.
CREATE INDEX results_by_baseline ON results(op, variant, shape, dtype, gpu_model, branch, status, finished_ms, seq);
CREATE INDEX results_by_history ON results(op, status, finished_ms, seq);

CREATE TABLE series (
  op           TEXT NOT NULL,
  variant      TEXT NOT NULL,
  shape        TEXT NOT NULL,
  dtype        BIGINT NOT NULL,
  gpu_model    TEXT NOT NULL,
  job_id       TEXT NOT NULL,
  finished_ms  BIGINT NOT NULL,
  median_ns    DOUBLE PRECISION NOT NULL,
  utilization  DOUBLE PRECISION,
  verdict      BIGINT NOT NULL,
  PRIMARY KEY (op, variant, shape, dtype, gpu_model)
);
)sql",
    // 3: the series key's measurement columns (SQLite's step 3 says how older rows are given them).
    R"sql(
ALTER TABLE results
  ADD COLUMN cache_mode BIGINT NOT NULL DEFAULT 1,  -- kbench.v1.CacheMode: COLD.
  ADD COLUMN hot_batch BIGINT NOT NULL DEFAULT 1,   -- Launches per sample; 1 for COLD.
  ADD COLUMN backend BIGINT NOT NULL DEFAULT 0;     -- kbench.v1.Backend; 0: not reported.
UPDATE results SET cache_mode = 2, shape = substr(shape, 1, length(shape) - 4) WHERE shape LIKE '% hot';
DROP INDEX results_by_baseline;
CREATE INDEX results_by_baseline ON results(op, variant, shape, dtype, gpu_model, cache_mode, hot_batch, backend,
                                            branch, status, finished_ms, seq);
ALTER TABLE series
  ADD COLUMN cache_mode BIGINT NOT NULL DEFAULT 1,
  ADD COLUMN hot_batch BIGINT NOT NULL DEFAULT 1,
  ADD COLUMN backend BIGINT NOT NULL DEFAULT 0;
ALTER TABLE series DROP CONSTRAINT series_pkey;  -- Before the update: "x hot" becomes "x" beside a cold "x".
UPDATE series SET cache_mode = 2, shape = substr(shape, 1, length(shape) - 4) WHERE shape LIKE '% hot';
ALTER TABLE series ADD PRIMARY KEY (op, variant, shape, dtype, gpu_model, cache_mode, hot_batch, backend);
)sql",
    // 4: admin controls of the series (threshold overrides, mutes, known steps), never edited.
    R"sql(
CREATE TABLE series_controls (
  id       BIGSERIAL PRIMARY KEY,  -- Increasing: the latest control is the greatest id.
  op       TEXT NOT NULL,
  kind     BIGINT NOT NULL,        -- kbench.v1.SeriesControlKind.
  control  BYTEA NOT NULL,         -- Serialized kbench.v1.SeriesControl (without its id).
  set_by   TEXT NOT NULL,          -- The admin token's name.
  set_ms   BIGINT NOT NULL
);
CREATE INDEX series_controls_by_op ON series_controls(op, id);
)sql",
    // 5: a version of each worker's registration, new at every registration (the sequence), so that
    // the fleet view reads the registrations that changed rather than every one every second
    // (PostgresStore::ListWorkerRows). SQLite's store is in-process and has no twin of this step.
    R"sql(
CREATE SEQUENCE workers_registration_version;
ALTER TABLE workers ADD COLUMN registration_version BIGINT NOT NULL
  DEFAULT nextval('workers_registration_version');
)sql",
};

// After step 3's backfill: each series point takes its hot batch and backend from its result.
constexpr const char* kSeriesFromResults = R"sql(
UPDATE series SET (hot_batch, backend) = (
  SELECT r.hot_batch, r.backend FROM results r
  WHERE r.job_id = series.job_id AND r.op = series.op AND r.variant = series.variant AND r.shape = series.shape
    AND r.dtype = series.dtype AND r.gpu_model = series.gpu_model AND r.cache_mode = series.cache_mode
  ORDER BY r.finished_ms DESC, r.seq DESC LIMIT 1)
WHERE EXISTS (
  SELECT 1 FROM results r
  WHERE r.job_id = series.job_id AND r.op = series.op AND r.variant = series.variant AND r.shape = series.shape
    AND r.dtype = series.dtype AND r.gpu_model = series.gpu_model AND r.cache_mode = series.cache_mode))sql";

// Step 3's backfill: each older row's hot batch and backend, read from its stored message.
absl::Status BackfillSeriesColumns(Connection& conn) {
  absl::StatusOr<Rows> rows = conn.Query("SELECT job_id, attempt, idx, result, cache_mode FROM results");
  if (!rows.ok()) return rows.status();
  for (int i = 0; i < rows->size(); ++i) {
    const LegacySeriesColumns c =
        LegacySeriesColumnsOf(rows->Text(i, 3), static_cast<v1::CacheMode>(rows->Int(i, 4)));
    absl::StatusOr<Rows> set = conn.Query(
        "UPDATE results SET hot_batch = $1, backend = $2 WHERE job_id = $3 AND attempt = $4 AND idx = $5",
        Params().Int(c.hot_batch).Int(c.backend).Text(rows->Text(i, 0)).Int(rows->Int(i, 1)).Int(rows->Int(i, 2)));
    if (!set.ok()) return set.status();
  }
  return conn.Exec(kSeriesFromResults);
}

}  // namespace

int CurrentSchemaVersion() { return static_cast<int>(kMigrations.size()); }

absl::Status Migrate(Connection& conn) { return MigrateTo(conn, CurrentSchemaVersion()); }

absl::Status MigrateTo(Connection& conn, int target) {
  if (target > CurrentSchemaVersion()) return absl::InvalidArgumentError("schema version: beyond this build's");
  if (absl::Status s = conn.Exec("BEGIN"); !s.ok()) return s;
  absl::Status result = [&]() -> absl::Status {
    if (absl::Status s = conn.Exec(absl::StrCat("SELECT pg_advisory_xact_lock(", kMigrationLockKey, ")")); !s.ok())
      return s;
    if (absl::Status s = conn.Exec("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)"); !s.ok())
      return s;
    absl::StatusOr<Rows> rows = conn.Query("SELECT version FROM schema_version");
    if (!rows.ok()) return rows.status();
    const bool has_row = rows->size() > 0;
    const int version = has_row ? static_cast<int>(rows->Int(0, 0)) : 0;
    if (version > CurrentSchemaVersion())
      return absl::FailedPreconditionError(absl::StrCat("database schema version ", version,
                                                        " is newer than this coordinator's (", CurrentSchemaVersion(),
                                                        "); upgrade the coordinator"));
    for (int v = version; v < target; ++v) {
      if (absl::Status s = conn.Exec(kMigrations[v]); !s.ok()) return s;
      if (v == 2)
        if (absl::Status s = BackfillSeriesColumns(conn); !s.ok()) return s;
    }
    if (version >= target) return absl::OkStatus();
    absl::StatusOr<Rows> set =
        conn.Query(has_row ? "UPDATE schema_version SET version = $1" : "INSERT INTO schema_version VALUES ($1)",
                   Params().Int(target));
    return set.status();
  }();
  if (!result.ok()) {
    (void)conn.Exec("ROLLBACK");
    return result;
  }
  return conn.Exec("COMMIT");
}

}  // namespace kbench::server::pg

// PostgresStore: the Store's operations as SQL over libpq. The same columns as the SQLite store
// (protobuf messages serialized in BYTEA, the fields queries filter or sort on in their own columns).
// The job lifecycle (what a lease, report, completion, cancellation or expiry decides) is
// job_lifecycle.cc over this dialect's statements (pg_jobs.cc); here: transactions, the queue read, reads.
#include "server/store/postgres_store.h"

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/names.h"
#include "server/store/job_lifecycle.h"
#include "server/store/pg_jobs.h"
#include "server/store/pg_schema.h"
#include "server/store/result_columns.h"

namespace kbench::server {
namespace {

using pg::Connection;
using pg::Params;
using pg::Rows;
using pg::ReadJobRow;

constexpr int kTransactionAttempts = 5;
constexpr int kLeasePage = 64;  // Queued jobs read per round while looking for one the worker can run.
constexpr size_t kLeaseCandidates = 16;  // Jobs the worker can run offered to one grant statement.
constexpr absl::string_view kWorkerColumns = "worker_id, info, last_heartbeat_ms, state, current_job_id";

const absl::Status& StatusOf(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}

absl::StatusOr<WorkerRecord> ReadWorker(const Rows& r, int row) {
  WorkerRecord w;
  if (absl::Status s = ParseStored(r.Text(row, 1), &w.info, "worker info"); !s.ok()) return s;
  w.info.set_worker_id(r.Text(row, 0));
  w.last_heartbeat_unix_ms = r.Int(row, 2);
  w.state = r.Text(row, 3);
  w.current_job_id = r.Text(row, 4);
  return w;
}

}  // namespace

bool IsPostgresUri(absl::string_view db) {
  return absl::StartsWith(db, "postgresql://") || absl::StartsWith(db, "postgres://");
}

namespace {

// Runs a transaction until it ends other than ABORTED (a deadlock or serialization failure), at most
// kTransactionAttempts times.
template <typename F>
auto RetryAborted(F attempt) -> decltype(attempt()) {
  decltype(attempt()) result = absl::InternalError("postgres: transaction not attempted");
  for (int i = 0; i < kTransactionAttempts; ++i) {
    result = attempt();
    if (!absl::IsAborted(StatusOf(result))) return result;
  }
  return result;
}

}  // namespace

template <typename Body>
auto PostgresStore::Transact(Body body) -> decltype(body(std::declval<pg::Connection&>())) {
  using Result = decltype(body(std::declval<pg::Connection&>()));
  pg::Pool::Handle conn = pool_->Acquire();
  return RetryAborted([&]() -> Result {
    if (!conn->EnsureConnected()) return absl::UnavailableError("postgres: connection lost; reconnecting failed");
    if (absl::Status s = conn->Exec("BEGIN"); !s.ok()) return s;
    Result result = body(*conn);
    if (!result.ok()) {
      (void)conn->Exec("ROLLBACK");
      return result;
    }
    if (absl::Status committed = conn->Exec("COMMIT"); !committed.ok()) return committed;
    return result;
  });
}

absl::StatusOr<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& conninfo, int pool_size) {
  absl::StatusOr<std::unique_ptr<pg::Pool>> pool = pg::Pool::Open(conninfo, pool_size);
  if (!pool.ok()) return pool.status();
  std::unique_ptr<PostgresStore> store(new PostgresStore(*std::move(pool)));
  {
    pg::Pool::Handle conn = store->pool_->Acquire();
    if (absl::Status s = pg::Migrate(*conn); !s.ok()) return s;
  }
  return store;
}

absl::StatusOr<InsertOutcome> PostgresStore::InsertJob(const v1::Job& job) {
  return Transact([&](Connection& c) -> absl::StatusOr<InsertOutcome> {
    auto by_key = [&]() -> absl::StatusOr<std::optional<JobRow>> {
      absl::StatusOr<Rows> r = c.Query(absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE idempotency_key = $1"),
                                       Params().Text(job.idempotency_key()));
      if (!r.ok()) return r.status();
      if (r->size() == 0) return std::optional<JobRow>();
      absl::StatusOr<JobRow> row = ReadJobRow(*r, 0);
      if (!row.ok()) return row.status();
      return std::optional<JobRow>(*std::move(row));
    };
    if (!job.idempotency_key().empty()) {
      absl::StatusOr<std::optional<JobRow>> existing = by_key();
      if (!existing.ok()) return existing.status();
      if (existing->has_value()) return InsertOutcome{(*existing)->job, false};
    }
    Params p;
    p.Text(job.job_id());
    if (job.idempotency_key().empty()) p.NullText();
    else p.Text(job.idempotency_key());
    p.Bytes(job.spec().SerializeAsString())
        .Int(job.state())
        .Int(job.attempts())
        .Text(job.worker_id())
        .Int(job.created_unix_ms())
        .Int(job.started_unix_ms())
        .Int(job.finished_unix_ms())
        .Text(job.error());
    if (job.has_progress()) p.Bytes(job.progress().SerializeAsString());
    else p.NullBytes();
    // ON CONFLICT covers both the key (another replica's concurrent submission) and the id.
    absl::StatusOr<Rows> ins = c.Query(R"sql(
INSERT INTO jobs (job_id, idempotency_key, spec, state, attempts, worker_id, created_ms, started_ms, finished_ms,
                  error, progress)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT DO NOTHING)sql",
                                       p);
    if (!ins.ok()) return ins.status();
    if (ins->Affected() == 1) return InsertOutcome{job, true};
    if (!job.idempotency_key().empty()) {
      absl::StatusOr<std::optional<JobRow>> existing = by_key();
      if (!existing.ok()) return existing.status();
      if (existing->has_value()) return InsertOutcome{(*existing)->job, false};
    }
    return absl::AlreadyExistsError(absl::StrCat("job id '", job.job_id(), "' is taken"));
  });
}

absl::StatusOr<v1::Job> PostgresStore::GetJob(absl::string_view job_id) {
  return Read([&](Connection& c) -> absl::StatusOr<v1::Job> {
    absl::StatusOr<JobRow> row = pg::PgJobTables(c).LoadJob(job_id, false);
    if (!row.ok()) return row.status();
    return std::move(row->job);
  });
}

absl::StatusOr<std::optional<v1::Job>> PostgresStore::FindJobByIdempotencyKey(absl::string_view key) {
  if (key.empty()) return std::optional<v1::Job>();
  return Read([&](Connection& c) -> absl::StatusOr<std::optional<v1::Job>> {
    absl::StatusOr<Rows> r =
        c.Query(absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE idempotency_key = $1"), Params().Text(key));
    if (!r.ok()) return r.status();
    if (r->size() == 0) return std::optional<v1::Job>();
    absl::StatusOr<JobRow> row = ReadJobRow(*r, 0);
    if (!row.ok()) return row.status();
    return std::optional<v1::Job>(std::move(row->job));
  });
}

absl::StatusOr<std::vector<v1::Job>> PostgresStore::ListJobs(int limit, v1::JobState state) {
  // A state is a literal, as in pg::QueuePageSql: the generic plan cached for `state = $1` walked
  // jobs_by_created and filtered, so the queue watch's list of the queued jobs, twice a second, read
  // every job ever submitted. Known states only, so that the prepared statements stay few; no stored
  // job has another.
  if (state != v1::JOB_STATE_UNSPECIFIED && !v1::JobState_IsValid(state)) return std::vector<v1::Job>();
  const std::string where =
      state == v1::JOB_STATE_UNSPECIFIED ? "" : absl::StrCat(" WHERE state = ", static_cast<int>(state));
  return Read([&](Connection& c) -> absl::StatusOr<std::vector<v1::Job>> {
    absl::StatusOr<Rows> r = c.Query(
        absl::StrCat("SELECT ", kJobColumns, " FROM jobs", where, " ORDER BY created_ms DESC, seq DESC LIMIT $1"),
        Params().Int(limit));
    if (!r.ok()) return r.status();
    std::vector<v1::Job> out;
    for (int i = 0; i < r->size(); ++i) {
      absl::StatusOr<JobRow> row = ReadJobRow(*r, i);
      if (!row.ok()) return row.status();
      out.push_back(std::move(row->job));
    }
    return out;
  });
}

absl::StatusOr<std::map<v1::JobState, int64_t>> PostgresStore::CountJobsByState() {
  return Read([&](Connection& c) -> absl::StatusOr<std::map<v1::JobState, int64_t>> {
    absl::StatusOr<Rows> r = c.Query("SELECT state, COUNT(*) FROM jobs GROUP BY state");
    if (!r.ok()) return r.status();
    std::map<v1::JobState, int64_t> out;
    for (int i = 0; i < r->size(); ++i) out[static_cast<v1::JobState>(r->Int(i, 0))] = r->Int(i, 1);
    return out;
  });
}

absl::StatusOr<Transition> PostgresStore::CancelJob(absl::string_view job_id, int64_t now_ms) {
  return Transact([&](Connection& c) {
    pg::PgJobTables t(c);
    return lifecycle::Cancel(t, job_id, now_ms);
  });
}

absl::StatusOr<std::optional<Lease>> PostgresStore::LeaseNextJob(absl::string_view worker_id,
                                                                 const JobMatcher& matcher, int64_t now_ms,
                                                                 int64_t ttl_ms, absl::string_view lease_id) {
  // Two round trips for a grant, no BEGIN or COMMIT: a page of the queue read without locks (oldest
  // first; the matcher, C++ over the spec, picks the candidates), then the grant as one statement
  // that claims the oldest candidate still QUEUED and writes the lifecycle's rows
  // (PgJobTables::StartAttempt). The spec never changes, so a candidate read in one snapshot stays
  // one the worker can run; its state is checked again under the claim's lock. A candidate another
  // replica is claiming right now is passed over, not waited for; when every candidate was taken
  // meanwhile, the queue is read on from there. Most polls of an idle fleet find nothing: one read.
  return Read([&](Connection& c) -> absl::StatusOr<std::optional<Lease>> {
    int64_t after_created = std::numeric_limits<int64_t>::min();
    int64_t after_seq = std::numeric_limits<int64_t>::min();
    while (true) {
      absl::StatusOr<Rows> page =
          c.Query(pg::QueuePageSql(), Params().Int(after_created).Int(after_seq).Int(kLeasePage));
      if (!page.ok()) return page.status();
      for (int i = 0; i < page->size();) {
        // Up to kLeaseCandidates at a time: enough for the replicas and pool connections granting
        // at once, without parsing a long queue's every spec.
        std::vector<std::string> candidates;
        for (; i < page->size() && candidates.size() < kLeaseCandidates; ++i) {
          after_created = page->Int(i, 2);
          after_seq = page->Int(i, 3);
          v1::JobSpec spec;
          if (absl::Status s = ParseStored(page->Text(i, 1), &spec, "job spec"); !s.ok()) return s;
          if (matcher(spec)) candidates.push_back(page->Text(i, 0));
        }
        if (candidates.empty()) continue;
        // One statement, its own transaction: retried as Transact retries.
        absl::StatusOr<std::optional<Lease>> lease = RetryAborted([&] {
          pg::PgJobTables t(c);
          return lifecycle::Grant(t, candidates, worker_id, lease_id, now_ms, ttl_ms);
        });
        if (!lease.ok() || lease->has_value()) return lease;
      }
      if (page->size() < kLeasePage) return std::optional<Lease>();
    }
  });
}

absl::StatusOr<Lease> PostgresStore::ExtendLease(absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                                                 const v1::Progress* progress) {
  return Transact([&](Connection& c) {
    pg::PgJobTables t(c);
    return lifecycle::Extend(t, lease_id, now_ms, ttl_ms, progress);
  });
}

absl::StatusOr<v1::Job> PostgresStore::GetLeasedJob(absl::string_view lease_id, int64_t now_ms) {
  return Read([&](Connection& c) -> absl::StatusOr<v1::Job> {
    pg::PgJobTables t(c);
    absl::StatusOr<JobRow> row = lifecycle::LiveLease(t, lease_id, now_ms, /*lock=*/false);
    if (!row.ok()) return row.status();
    return std::move(row->job);
  });
}

absl::StatusOr<ReportOutcome> PostgresStore::AppendResults(absl::string_view lease_id, int64_t now_ms,
                                                           int64_t ttl_ms, const v1::Progress* progress,
                                                           const std::vector<v1::Result>& results,
                                                           const std::vector<ResultVerdict>& verdicts) {
  if (absl::Status s = lifecycle::CheckVerdicts(results, verdicts); !s.ok()) return s;
  return Transact([&](Connection& c) {
    pg::PgJobTables t(c);
    return lifecycle::Report(t, lease_id, now_ms, ttl_ms, progress, results, verdicts);
  });
}

absl::StatusOr<Transition> PostgresStore::CompleteJob(absl::string_view lease_id, int64_t now_ms, bool failed,
                                                      absl::string_view error) {
  return Transact([&](Connection& c) {
    pg::PgJobTables t(c);
    return lifecycle::Complete(t, lease_id, now_ms, failed, error);
  });
}

absl::StatusOr<std::vector<Transition>> PostgresStore::RequeueExpired(int64_t now_ms, int max_attempts) {
  return Transact([&](Connection& c) {
    pg::PgJobTables t(c);
    return lifecycle::RequeueExpired(t, now_ms, max_attempts);
  });
}

absl::StatusOr<std::vector<v1::Result>> PostgresStore::GetResults(absl::string_view job_id, bool include_samples) {
  // One statement (one snapshot, one round trip): the job's current attempt and its results. No
  // row: no such job; one row of NULLs: no result yet. Only the current attempt: earlier attempts'
  // rows are deleted when they expire, and this keeps a store that retained them from mixing them.
  return Read([&](Connection& c) -> absl::StatusOr<std::vector<v1::Result>> {
    absl::StatusOr<Rows> r = c.Query(
        absl::StrCat("SELECT r.result, ", include_samples ? "r.samples, r.samples_order" : "NULL::bytea, NULL::bytea",
                     " FROM jobs j LEFT JOIN results r ON r.job_id = j.job_id AND r.attempt = j.attempts"
                     " WHERE j.job_id = $1 ORDER BY r.idx"),
        Params().Text(job_id));
    if (!r.ok()) return r.status();
    if (r->size() == 0) return lifecycle::JobNotFound(job_id);
    std::vector<v1::Result> out;
    for (int i = 0; i < r->size(); ++i) {
      if (r->IsNull(i, 0)) continue;  // The job without results.
      absl::StatusOr<v1::Result> res =
          ReadStoredResult(r->Text(i, 0), include_samples, !r->IsNull(i, 1), r->Text(i, 1), r->Text(i, 2));
      if (!res.ok()) return res.status();
      out.push_back(*std::move(res));
    }
    return out;
  });
}

absl::Status PostgresStore::UpsertWorker(const v1::WorkerInfo& info, int64_t now_ms) {
  if (info.worker_id().empty()) return absl::InvalidArgumentError("worker info has no worker_id");
  return Transact([&](Connection& c) -> absl::Status {
    absl::StatusOr<Rows> up = c.Query(R"sql(
INSERT INTO workers (worker_id, info, last_heartbeat_ms) VALUES ($1, $2, $3)
ON CONFLICT (worker_id) DO UPDATE SET info = EXCLUDED.info, last_heartbeat_ms = EXCLUDED.last_heartbeat_ms,
  registration_version = nextval('workers_registration_version'))sql",
                                      Params().Text(info.worker_id()).Bytes(info.SerializeAsString()).Int(now_ms));
    if (!up.ok()) return up.status();
    return pg::PgJobTables(c).RefreshWorker(info.worker_id());
  });
}

absl::StatusOr<std::vector<std::string>> PostgresStore::Heartbeat(absl::string_view worker_id, int64_t now_ms) {
  // One statement, one round trip: heartbeats are most of a fleet's calls, and a transaction of
  // BEGIN, SET, UPDATE, SELECT and COMMIT was five round trips of a busy server's CPU. No row: the
  // worker is unknown; else one row per cancelled job it holds (one NULL row for none). A heartbeat
  // is soft state: its commit does not wait for the WAL flush (set_config(..., true) holds for this
  // statement's own transaction, whose commit follows it; the next durable commit's flush covers
  // it), as SQLite does not fsync it.
  return Read([&](Connection& c) -> absl::StatusOr<std::vector<std::string>> {
    absl::StatusOr<Rows> r = c.Query(
        "WITH soft AS (SELECT set_config('synchronous_commit', 'off', true)), "
        "beat AS (UPDATE workers SET last_heartbeat_ms = $2 WHERE worker_id = $1 RETURNING worker_id) "
        "SELECT j.job_id FROM beat CROSS JOIN soft "
        "LEFT JOIN jobs j ON j.worker_id = beat.worker_id AND j.lease_id > '' AND j.state = $3 "
        "ORDER BY j.created_ms, j.seq",
        Params().Text(worker_id).Int(now_ms).Int(v1::CANCELLED_JOB));
    if (!r.ok()) return r.status();
    if (r->size() == 0) return lifecycle::WorkerNotFound(worker_id);
    std::vector<std::string> cancelled;
    for (int i = 0; i < r->size(); ++i)
      if (!r->IsNull(i, 0)) cancelled.push_back(r->Text(i, 0));
    return cancelled;
  });
}

absl::StatusOr<WorkerRecord> PostgresStore::GetWorker(absl::string_view worker_id) {
  return Read([&](Connection& c) -> absl::StatusOr<WorkerRecord> {
    absl::StatusOr<Rows> r =
        c.Query(absl::StrCat("SELECT ", kWorkerColumns, " FROM workers WHERE worker_id = $1"),
                Params().Text(worker_id));
    if (!r.ok()) return r.status();
    if (r->size() == 0) return lifecycle::WorkerNotFound(worker_id);
    return ReadWorker(*r, 0);
  });
}

absl::StatusOr<std::vector<WorkerRecord>> PostgresStore::ListWorkers() {
  return ParseWorkerRows(ListWorkerRows(nullptr));
}

absl::StatusOr<std::vector<WorkerRow>> PostgresStore::ListWorkerRows(const HaveRegistration& have) {
  // Every row without its registration first (a thousand rows are a few tens of KiB; with their
  // registrations they were ~9 MiB, decompressed by the server and copied by both sides, twice a
  // second for the fleet view: server/README.md, Load), then the registrations the caller does not
  // hold, each with the version it is at when read: a registration changed between the two reads
  // comes with its new version, which the next read then finds held.
  return Read([&](Connection& c) -> absl::StatusOr<std::vector<WorkerRow>> {
    absl::StatusOr<Rows> r = c.Query(absl::StrCat(
        "SELECT worker_id, ", have ? "NULL::bytea" : "info",
        ", last_heartbeat_ms, state, current_job_id, registration_version FROM workers ORDER BY seq"));
    if (!r.ok()) return r.status();
    std::vector<WorkerRow> out;
    out.reserve(r->size());
    std::vector<std::string> wanted;
    std::map<std::string, size_t> wanted_at;  // worker_id -> its row in out
    for (int i = 0; i < r->size(); ++i) {
      WorkerRow& w = out.emplace_back();
      w.worker_id = r->Text(i, 0);
      w.last_heartbeat_unix_ms = r->Int(i, 2);
      w.state = r->Text(i, 3);
      w.current_job_id = r->Text(i, 4);
      w.registration_version = r->Int(i, 5);
      if (!have) {
        w.registration = r->Text(i, 1);
      } else if (have(w.worker_id, w.registration_version)) {
        w.registration_left_out = true;
      } else {
        wanted_at.emplace(w.worker_id, out.size() - 1);
        wanted.push_back(w.worker_id);
      }
    }
    if (wanted.empty()) return out;
    absl::StatusOr<Rows> regs = c.Query(
        "SELECT worker_id, info, registration_version FROM workers WHERE worker_id = ANY($1::text[])",
        Params().TextArray(wanted));
    if (!regs.ok()) return regs.status();
    for (int i = 0; i < regs->size(); ++i) {
      auto at = wanted_at.find(regs->Text(i, 0));
      if (at == wanted_at.end()) continue;
      out[at->second].registration = regs->Text(i, 1);
      out[at->second].registration_version = regs->Int(i, 2);
      wanted_at.erase(at);
    }
    // Workers are never removed; should one be between the reads, its row goes rather than stay
    // without a registration.
    if (!wanted_at.empty()) {
      std::vector<WorkerRow> kept;
      kept.reserve(out.size());
      for (size_t i = 0; i < out.size(); ++i)
        if (!wanted_at.contains(out[i].worker_id))
          kept.push_back(std::move(out[i]));
      out = std::move(kept);
    }
    return out;
  });
}

}  // namespace kbench::server

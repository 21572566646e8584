// SqliteStore: the Store's operations as SQL. Jobs, results and workers hold their protobuf messages
// serialized in BLOB columns, with the fields that queries filter or sort on in their own columns.
// The job lifecycle (what a lease, report, completion, cancellation or expiry decides) is
// job_lifecycle.cc over this dialect's statements (sqlite_jobs.cc); here: transactions, queue order, reads.
#include "server/store/sqlite_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "api/names.h"
#include "server/store/job_lifecycle.h"
#include "server/store/result_columns.h"
#include "server/store/sqlite_schema.h"
#include "server/store/sqlite_util.h"

namespace kbench::server {
namespace {

using sqlite::Statement;
using sqlite::Transaction;

using sqlite::ReadJobRow;

absl::StatusOr<v1::Job> ReadJob(const Statement& q) {
  absl::StatusOr<JobRow> row = ReadJobRow(q);
  if (!row.ok()) return row.status();
  return std::move(row->job);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path, bool fsync_each_commit) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    absl::Status s = sqlite::Error(db, rc, absl::StrCat("open '", path, "'"));
    sqlite3_close(db);
    return s;
  }
  // A file's commits are made durable by group commit (sqlite_group_commit.h); an in-memory
  // database has nothing to sync.
  const bool in_memory = path.empty() || path == ":memory:" || path.starts_with("file::memory:");
  std::unique_ptr<SqliteStore> store(new SqliteStore(
      db, fsync_each_commit && !in_memory ? std::make_unique<sqlite::GroupCommit>(path + "-wal") : nullptr));
  // WAL lets readers (another process inspecting the file) proceed during writes; synchronous=NORMAL
  // writes each commit into the WAL without an fsync, which the group commit adds outside the lock
  // (and a checkpoint syncs the WAL before it copies pages); busy_timeout rides out a brief lock held
  // by such a reader.
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON",
                             "PRAGMA busy_timeout=5000"}) {
    if (absl::Status s = sqlite::Exec(db, pragma); !s.ok()) return s;
  }
  if (absl::Status s = sqlite::Migrate(db); !s.ok()) return s;
  return store;
}

SqliteStore::~SqliteStore() {
  absl::MutexLock lock(&mu_);
  statements_.reset();
  sqlite3_close(db_);
}

namespace {

absl::StatusOr<WorkerRecord> ReadWorker(const Statement& q) {
  WorkerRecord w;
  if (absl::Status s = ParseStored(q.Blob(1), &w.info, "worker info"); !s.ok()) return s;
  w.info.set_worker_id(q.Text(0));
  w.last_heartbeat_unix_ms = q.Int(2);
  w.state = q.Text(3);
  w.current_job_id = q.Text(4);
  return w;
}

}  // namespace

uint64_t SqliteStore::Committed(int64_t changes_before) {
  if (group_commit_ == nullptr || sqlite3_total_changes64(db_) == changes_before) return 0;
  return group_commit_->Committed();
}

absl::Status SqliteStore::Durable(uint64_t ticket) {
  return group_commit_ == nullptr ? absl::OkStatus() : group_commit_->WaitDurable(ticket);
}

template <typename Body>
auto SqliteStore::Transact(Body body) -> decltype(body(std::declval<sqlite::SqliteJobTables&>())) {
  uint64_t ticket = 0;
  auto result = [&]() -> decltype(body(std::declval<sqlite::SqliteJobTables&>())) {
    absl::MutexLock lock(&mu_);
    const int64_t changes_before = sqlite3_total_changes64(db_);
    Transaction tx(statements_.get());
    if (!tx.status().ok()) return tx.status();
    sqlite::SqliteJobTables tables(statements_.get());
    auto r = body(tables);
    if (!r.ok()) return r;
    if (absl::Status s = tx.Commit(); !s.ok()) return s;
    ticket = Committed(changes_before);
    return r;
  }();
  if (!result.ok()) return result;
  if (absl::Status s = Durable(ticket); !s.ok()) return s;
  return result;
}

absl::StatusOr<InsertOutcome> SqliteStore::InsertJob(const v1::Job& job) {
  uint64_t ticket = 0;
  absl::StatusOr<InsertOutcome> out = InsertJobLocked(job, ticket);
  if (!out.ok()) return out;
  if (absl::Status s = Durable(ticket); !s.ok()) return s;
  return out;
}

absl::StatusOr<InsertOutcome> SqliteStore::InsertJobLocked(const v1::Job& job, uint64_t& ticket) {
  absl::MutexLock lock(&mu_);
  const int64_t changes_before = sqlite3_total_changes64(db_);
  Transaction tx(statements_.get());
  if (!tx.status().ok()) return tx.status();
  if (!job.idempotency_key().empty()) {
    Statement q(statements_.get(), "SELECT job_id FROM jobs WHERE idempotency_key = ?1");
    q.BindText(1, job.idempotency_key());
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (*row) {
      absl::StatusOr<JobRow> existing = sqlite::SqliteJobTables(statements_.get()).LoadJob(q.Text(0), false);
      if (!existing.ok()) return existing.status();
      // The first submission's commit may still be waiting for its sync: this answer waits for it too.
      if (group_commit_ != nullptr) ticket = group_commit_->Latest();
      return InsertOutcome{existing->job, false};
    }
  }
  Statement ins(statements_.get(), R"sql(
INSERT INTO jobs (job_id, idempotency_key, spec, state, attempts, worker_id, created_ms, started_ms, finished_ms,
                  error, progress)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11))sql");
  ins.BindText(1, job.job_id());
  if (job.idempotency_key().empty()) ins.BindNull(2);
  else ins.BindText(2, job.idempotency_key());
  ins.BindBlob(3, job.spec().SerializeAsString())
      .Bind(4, int64_t{job.state()})
      .Bind(5, int64_t{job.attempts()})
      .BindText(6, job.worker_id())
      .Bind(7, job.created_unix_ms())
      .Bind(8, job.started_unix_ms())
      .Bind(9, job.finished_unix_ms())
      .BindText(10, job.error());
  if (job.has_progress()) ins.BindBlob(11, job.progress().SerializeAsString());
  else ins.BindNull(11);
  if (absl::Status s = ins.Run(); !s.ok()) {
    if (absl::IsAlreadyExists(s)) return absl::AlreadyExistsError(absl::StrCat("job id '", job.job_id(), "' is taken"));
    return s;
  }
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  ticket = Committed(changes_before);
  return InsertOutcome{job, true};
}

absl::StatusOr<v1::Job> SqliteStore::GetJob(absl::string_view job_id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<JobRow> row = sqlite::SqliteJobTables(statements_.get()).LoadJob(job_id, false);
  if (!row.ok()) return row.status();
  return std::move(row->job);
}

absl::StatusOr<std::optional<v1::Job>> SqliteStore::FindJobByIdempotencyKey(absl::string_view key) {
  absl::MutexLock lock(&mu_);
  if (key.empty()) return std::optional<v1::Job>();
  Statement q(statements_.get(), absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE idempotency_key = ?1"));
  q.BindText(1, key);
  absl::StatusOr<bool> row = q.Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<v1::Job>();
  absl::StatusOr<v1::Job> job = ReadJob(q);
  if (!job.ok()) return job.status();
  return std::optional<v1::Job>(*std::move(job));
}

absl::StatusOr<std::vector<v1::Job>> SqliteStore::ListJobs(int limit, v1::JobState state) {
  absl::MutexLock lock(&mu_);
  Statement q(statements_.get(), absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE (?1 = 0 OR state = ?1) ",
                                "ORDER BY created_ms DESC, rowid DESC LIMIT ?2"));
  q.Bind(1, int64_t{state}).Bind(2, int64_t{limit});
  std::vector<v1::Job> out;
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    absl::StatusOr<v1::Job> job = ReadJob(q);
    if (!job.ok()) return job.status();
    out.push_back(*std::move(job));
  }
  return out;
}

absl::StatusOr<std::map<v1::JobState, int64_t>> SqliteStore::CountJobsByState() {
  absl::MutexLock lock(&mu_);
  Statement q(statements_.get(), "SELECT state, COUNT(*) FROM jobs GROUP BY state");
  std::map<v1::JobState, int64_t> out;
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out[static_cast<v1::JobState>(q.Int(0))] = q.Int(1);
  }
  return out;
}

absl::StatusOr<Transition> SqliteStore::CancelJob(absl::string_view job_id, int64_t now_ms) {
  return Transact([&](JobTables& t) { return lifecycle::Cancel(t, job_id, now_ms); });
}

absl::StatusOr<std::optional<Lease>> SqliteStore::LeaseNextJob(absl::string_view worker_id, const JobMatcher& matcher,
                                                               int64_t now_ms, int64_t ttl_ms,
                                                               absl::string_view lease_id) {
  uint64_t ticket = 0;
  absl::StatusOr<std::optional<Lease>> lease = LeaseNextJobLocked(worker_id, matcher, now_ms, ttl_ms, lease_id, ticket);
  if (!lease.ok()) return lease;
  if (absl::Status s = Durable(ticket); !s.ok()) return s;
  return lease;
}

absl::StatusOr<std::optional<Lease>> SqliteStore::LeaseNextJobLocked(absl::string_view worker_id,
                                                                     const JobMatcher& matcher, int64_t now_ms,
                                                                     int64_t ttl_ms, absl::string_view lease_id,
                                                                     uint64_t& ticket) {
  absl::MutexLock lock(&mu_);
  // The choice is read before any write transaction: most polls of an idle fleet find nothing and
  // then cost one indexed read, no BEGIN IMMEDIATE. The lock is held from the read to the grant, and
  // this connection is the only writer, so the chosen job is still QUEUED when it is granted.
  // Oldest first; a requeued job keeps its creation time and so goes to the front again.
  std::string chosen;
  {
    Statement q(statements_.get(), "SELECT job_id, spec FROM jobs WHERE state = ?1 ORDER BY created_ms, rowid");
    q.Bind(1, int64_t{v1::QUEUED});
    while (chosen.empty()) {
      absl::StatusOr<bool> row = q.Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      v1::JobSpec spec;
      if (absl::Status s = ParseStored(q.Blob(1), &spec, "job spec"); !s.ok()) return s;
      if (matcher(spec)) chosen = q.Text(0);
    }
  }
  if (chosen.empty()) return std::optional<Lease>();
  const int64_t changes_before = sqlite3_total_changes64(db_);
  Transaction tx(statements_.get());
  if (!tx.status().ok()) return tx.status();
  sqlite::SqliteJobTables tables(statements_.get());
  absl::StatusOr<std::optional<Lease>> lease = lifecycle::Grant(tables, {chosen}, worker_id, lease_id, now_ms, ttl_ms);
  if (!lease.ok()) return lease.status();
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  ticket = Committed(changes_before);
  return lease;
}

absl::StatusOr<Lease> SqliteStore::ExtendLease(absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                                               const v1::Progress* progress) {
  return Transact([&](JobTables& t) { return lifecycle::Extend(t, lease_id, now_ms, ttl_ms, progress); });
}

absl::StatusOr<v1::Job> SqliteStore::GetLeasedJob(absl::string_view lease_id, int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  sqlite::SqliteJobTables tables(statements_.get());
  absl::StatusOr<JobRow> row = lifecycle::LiveLease(tables, lease_id, now_ms, /*lock=*/false);
  if (!row.ok()) return row.status();
  return std::move(row->job);
}

absl::StatusOr<ReportOutcome> SqliteStore::AppendResults(absl::string_view lease_id, int64_t now_ms, int64_t ttl_ms,
                                                         const v1::Progress* progress,
                                                         const std::vector<v1::Result>& results,
                                                         const std::vector<ResultVerdict>& verdicts) {
  if (absl::Status s = lifecycle::CheckVerdicts(results, verdicts); !s.ok()) return s;
  return Transact(
      [&](JobTables& t) { return lifecycle::Report(t, lease_id, now_ms, ttl_ms, progress, results, verdicts); });
}

absl::StatusOr<Transition> SqliteStore::CompleteJob(absl::string_view lease_id, int64_t now_ms, bool failed,
                                                    absl::string_view error) {
  return Transact([&](JobTables& t) { return lifecycle::Complete(t, lease_id, now_ms, failed, error); });
}

absl::StatusOr<std::vector<Transition>> SqliteStore::RequeueExpired(int64_t now_ms, int max_attempts) {
  return Transact([&](JobTables& t) { return lifecycle::RequeueExpired(t, now_ms, max_attempts); });
}

absl::StatusOr<std::vector<v1::Result>> SqliteStore::GetResults(absl::string_view job_id, bool include_samples) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<JobRow> job = sqlite::SqliteJobTables(statements_.get()).LoadJob(job_id, false);
  if (!job.ok()) return job.status();
  // Only the current attempt: earlier attempts' rows are deleted when they expire, and this keeps a
  // store that retained them from mixing attempts.
  Statement q(statements_.get(),
              absl::StrCat("SELECT result, ", include_samples ? "samples, samples_order" : "NULL, NULL",
                           " FROM results WHERE job_id = ?1 AND attempt = ?2 ORDER BY idx"));
  q.BindText(1, job_id).Bind(2, int64_t{job->job.attempts()});
  std::vector<v1::Result> out;
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    absl::StatusOr<v1::Result> r = ReadStoredResult(q.Blob(0), include_samples, !q.IsNull(1), q.Blob(1), q.Blob(2));
    if (!r.ok()) return r.status();
    out.push_back(*std::move(r));
  }
  return out;
}

absl::Status SqliteStore::UpsertWorker(const v1::WorkerInfo& info, int64_t now_ms) {
  if (info.worker_id().empty()) return absl::InvalidArgumentError("worker info has no worker_id");
  uint64_t ticket = 0;
  if (absl::Status s = UpsertWorkerLocked(info, now_ms, ticket); !s.ok()) return s;
  return Durable(ticket);
}

absl::Status SqliteStore::UpsertWorkerLocked(const v1::WorkerInfo& info, int64_t now_ms, uint64_t& ticket) {
  absl::MutexLock lock(&mu_);
  const int64_t changes_before = sqlite3_total_changes64(db_);
  Transaction tx(statements_.get());
  if (!tx.status().ok()) return tx.status();
  Statement q(statements_.get(), R"sql(
INSERT INTO workers (worker_id, info, last_heartbeat_ms) VALUES (?1, ?2, ?3)
ON CONFLICT(worker_id) DO UPDATE SET info = excluded.info, last_heartbeat_ms = excluded.last_heartbeat_ms)sql");
  q.BindText(1, info.worker_id()).BindBlob(2, info.SerializeAsString()).Bind(3, now_ms);
  if (absl::Status s = q.Run(); !s.ok()) return s;
  if (absl::Status s = sqlite::SqliteJobTables(statements_.get()).RefreshWorker(info.worker_id()); !s.ok()) return s;
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  ticket = Committed(changes_before);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> SqliteStore::Heartbeat(absl::string_view worker_id, int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  // A heartbeat is soft state: losing the last ones to a power loss harms nothing, so it does not wait
  // for a sync (the next durable commit's sync covers its WAL frames anyway). A fleet's heartbeats are
  // most of the coordinator's commits.
  Transaction tx(statements_.get());
  if (!tx.status().ok()) return tx.status();
  Statement up(statements_.get(), "UPDATE workers SET last_heartbeat_ms = ?2 WHERE worker_id = ?1");
  up.BindText(1, worker_id).Bind(2, now_ms);
  if (absl::Status s = up.Run(); !s.ok()) return s;
  if (sqlite3_changes(db_) == 0)
    return lifecycle::WorkerNotFound(worker_id);
  Statement q(statements_.get(),
              "SELECT job_id FROM jobs WHERE worker_id = ?1 AND lease_id > '' AND state = ?2 ORDER BY +created_ms");
  q.BindText(1, worker_id).Bind(2, int64_t{v1::CANCELLED_JOB});
  std::vector<std::string> cancelled;
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    cancelled.push_back(q.Text(0));
  }
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return cancelled;
}

absl::StatusOr<WorkerRecord> SqliteStore::GetWorker(absl::string_view worker_id) {
  absl::MutexLock lock(&mu_);
  Statement q(statements_.get(),
              "SELECT worker_id, info, last_heartbeat_ms, state, current_job_id FROM workers WHERE worker_id = ?1");
  q.BindText(1, worker_id);
  absl::StatusOr<bool> row = q.Step();
  if (!row.ok()) return row.status();
  if (!*row) return lifecycle::WorkerNotFound(worker_id);
  return ReadWorker(q);
}

absl::StatusOr<std::vector<WorkerRecord>> SqliteStore::ListWorkers() {
  return ParseWorkerRows(ListWorkerRows(nullptr));
}

absl::StatusOr<std::vector<WorkerRow>> SqliteStore::ListWorkerRows(const HaveRegistration& /*have*/) {
  // The rows are copied under the lock and parsed (by the caller) after it: a fleet's registrations
  // (catalogs of several KiB each) take long to parse, and every other call waits for the lock.
  std::vector<WorkerRow> out;
  absl::MutexLock lock(&mu_);
  Statement q(statements_.get(),
              "SELECT worker_id, info, last_heartbeat_ms, state, current_job_id FROM workers ORDER BY rowid");
  while (true) {
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    WorkerRow& w = out.emplace_back();
    w.worker_id = q.Text(0);
    w.registration = q.Blob(1);
    w.last_heartbeat_unix_ms = q.Int(2);
    w.state = q.Text(3);
    w.current_job_id = q.Text(4);
  }
  return out;
}

}  // namespace kbench::server

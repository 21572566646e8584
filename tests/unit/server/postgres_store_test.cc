// What is particular to the PostgreSQL store: the schema version and migrations shared by replicas,
// and leases that several replicas (stores on one database) take concurrently without ever sharing a
// job or waiting for each other's candidates; transactions retried, a bounded number of times, when a
// serialization failure or deadlock aborts them. Runs on a real server the test starts itself.
#include <libpq-fe.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "fixtures.h"
#include "gtest/gtest.h"
#include "postgres_fixture.h"
#include "server/coordinator/fleet_cache.h"
#include "server/store/pg_jobs.h"
#include "server/store/pg_schema.h"
#include "server/store/postgres_store.h"

namespace kbench::server {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;
constexpr int64_t kTtl = 60'000;

// A plain libpq session on the test database, for what the store does not expose.
class Session {
 public:
  explicit Session(const std::string& uri) : conn_(PQconnectdb(uri.c_str())) {
    EXPECT_EQ(PQstatus(conn_), CONNECTION_OK) << PQerrorMessage(conn_);
  }
  ~Session() { PQfinish(conn_); }
  // Runs sql; returns the first column of the first row, if any.
  std::string Exec(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    const ExecStatusType st = PQresultStatus(r);
    EXPECT_TRUE(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) << sql << ": " << PQresultErrorMessage(r);
    std::string out = (st == PGRES_TUPLES_OK && PQntuples(r) > 0) ? PQgetvalue(r, 0, 0) : "";
    PQclear(r);
    return out;
  }
  // Runs sql; returns the first column of every row, one a line.
  std::string Lines(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    EXPECT_EQ(PQresultStatus(r), PGRES_TUPLES_OK) << sql << ": " << PQresultErrorMessage(r);
    std::string out;
    for (int i = 0; PQresultStatus(r) == PGRES_TUPLES_OK && i < PQntuples(r); ++i)
      out += std::string(PQgetvalue(r, i, 0)) + "\n";
    PQclear(r);
    return out;
  }

 private:
  PGconn* conn_;
};

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<testing::PostgresServer*> server = testing::SharedPostgres();
    ASSERT_TRUE(server.ok()) << server.status();
    absl::StatusOr<std::string> uri = (*server)->CreateDatabase();
    ASSERT_TRUE(uri.ok()) << uri.status();
    uri_ = *uri;
  }

  std::unique_ptr<PostgresStore> Open(int pool_size = 4) {
    auto store = PostgresStore::Open(uri_, pool_size);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  static void Insert(Store& store, const std::string& id, int64_t created_ms) {
    v1::Job job;
    job.set_job_id(id);
    job.set_state(v1::QUEUED);
    job.set_created_unix_ms(created_ms);
    *job.mutable_spec() = testing::RmsnormSpec();
    ASSERT_TRUE(store.InsertJob(job).ok());
  }

  std::string uri_;
};

TEST_F(PostgresStoreTest, RecordsTheSchemaVersionAndRefusesANewerOne) {
  ASSERT_NE(Open(), nullptr);
  Session s(uri_);
  EXPECT_EQ(s.Exec("SELECT version FROM schema_version"), std::to_string(pg::CurrentSchemaVersion()));
  ASSERT_NE(Open(), nullptr);  // Opening again migrates nothing.
  EXPECT_EQ(s.Exec("SELECT COUNT(*) FROM schema_version"), "1");
  s.Exec("UPDATE schema_version SET version = 999");
  auto newer = PostgresStore::Open(uri_);
  EXPECT_EQ(newer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(newer.status().message().find("999"), absl::string_view::npos) << newer.status();
}

TEST_F(PostgresStoreTest, ReplicasStartingTogetherMigrateOnce) {
  std::vector<std::thread> replicas;
  std::vector<absl::Status> opened(4);
  for (size_t i = 0; i < opened.size(); ++i)
    replicas.emplace_back([&, i] { opened[i] = PostgresStore::Open(uri_, 1).status(); });
  for (auto& t : replicas) t.join();
  for (const absl::Status& s : opened) EXPECT_TRUE(s.ok()) << s;
  Session s(uri_);
  EXPECT_EQ(s.Exec("SELECT COUNT(*) FROM schema_version"), "1");
  EXPECT_EQ(s.Exec("SELECT version FROM schema_version"), std::to_string(pg::CurrentSchemaVersion()));
}

TEST_F(PostgresStoreTest, UnreachableServerIsUnavailable) {
  auto store = PostgresStore::Open("postgresql://kbench@127.0.0.1:1/none?connect_timeout=2");
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable) << store.status();
}

TEST_F(PostgresStoreTest, LeasePassesOverAJobAnotherReplicaHoldsLocked) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  Insert(*store, "j-1", kT0);
  Insert(*store, "j-2", kT0 + 1);
  // Another replica is in the middle of claiming j-1: its row is locked until that transaction ends.
  Session other(uri_);
  other.Exec("BEGIN");
  other.Exec("SELECT job_id FROM jobs WHERE job_id = 'j-1' FOR UPDATE");
  auto any = [](const v1::JobSpec&) { return true; };
  auto lease = store->LeaseNextJob("w-1", any, kT0 + 10, kTtl, "l-1");  // Returns at once: no waiting.
  ASSERT_TRUE(lease.ok() && lease->has_value()) << lease.status();
  EXPECT_EQ((*lease)->job.job_id(), "j-2");
  other.Exec("ROLLBACK");
  lease = store->LeaseNextJob("w-1", any, kT0 + 11, kTtl, "l-2");
  ASSERT_TRUE(lease.ok() && lease->has_value());
  EXPECT_EQ((*lease)->job.job_id(), "j-1");
}

// server/README.md promises that a transaction aborted by a serialization failure (SQLSTATE 40001)
// or a deadlock (40P01) is retried. A trigger on jobs raises that SQLSTATE on the first `failures`
// inserts; a sequence counts the attempts (nextval is never rolled back, the failed transactions are).
class PostgresRetryTest : public PostgresStoreTest {
 protected:
  static constexpr int kAttempts = 5;  // server/store/postgres_store.cc: kTransactionAttempts

  void InjectFailures(Session& s, int failures, const std::string& sqlstate) {
    s.Exec("CREATE SEQUENCE kbench_test_attempts");
    s.Exec("CREATE TABLE kbench_test_failures (n int NOT NULL, sqlstate text NOT NULL)");
    s.Exec("INSERT INTO kbench_test_failures VALUES (" + std::to_string(failures) + ", '" + sqlstate + "')");
    s.Exec(R"sql(CREATE FUNCTION kbench_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE f kbench_test_failures;
BEGIN
  SELECT * INTO f FROM kbench_test_failures;
  IF nextval('kbench_test_attempts') <= f.n THEN
    RAISE EXCEPTION 'injected by the test' USING ERRCODE = f.sqlstate;
  END IF;
  RETURN NEW;
END $$)sql");
    s.Exec("CREATE TRIGGER kbench_test_fail BEFORE INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION kbench_test_fail()");
  }

  // kAttempts - 1 failures, then the insert goes through: every attempt was made, one row stored.
  void ExpectRetried(const std::string& sqlstate) {
    auto store = Open(1);
    ASSERT_NE(store, nullptr);
    Session s(uri_);
    InjectFailures(s, kAttempts - 1, sqlstate);
    auto inserted = store->InsertJob(Queued("j-1"));
    ASSERT_TRUE(inserted.ok()) << inserted.status();
    EXPECT_EQ(s.Exec("SELECT last_value FROM kbench_test_attempts"), std::to_string(kAttempts));
    EXPECT_EQ(s.Exec("SELECT count(*) FROM jobs"), "1");  // the failed attempts left nothing behind
    auto job = store->GetJob("j-1");
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->state(), v1::QUEUED);
  }

  static v1::Job Queued(const std::string& id) {
    v1::Job job;
    job.set_job_id(id);
    job.set_state(v1::QUEUED);
    job.set_created_unix_ms(kT0);
    *job.mutable_spec() = testing::RmsnormSpec();
    return job;
  }
};

TEST_F(PostgresRetryTest, ASerializationFailureIsRetried) { ExpectRetried("40001"); }
TEST_F(PostgresRetryTest, ADeadlockIsRetried) { ExpectRetried("40P01"); }

TEST_F(PostgresRetryTest, RetriesAreBoundedAndTheLastErrorIsReturned) {
  auto store = Open(1);
  ASSERT_NE(store, nullptr);
  Session s(uri_);
  InjectFailures(s, 1000, "40001");
  auto inserted = store->InsertJob(Queued("j-1"));
  EXPECT_EQ(inserted.status().code(), absl::StatusCode::kAborted) << inserted.status();
  EXPECT_NE(inserted.status().message().find("injected by the test"), absl::string_view::npos) << inserted.status();
  EXPECT_EQ(s.Exec("SELECT last_value FROM kbench_test_attempts"), std::to_string(kAttempts));
  EXPECT_EQ(s.Exec("SELECT count(*) FROM jobs"), "0");
}

TEST_F(PostgresRetryTest, OtherErrorsAreNotRetried) {
  auto store = Open(1);
  ASSERT_NE(store, nullptr);
  Session s(uri_);
  InjectFailures(s, 1000, "22023");  // invalid_parameter_value: retrying cannot help
  auto inserted = store->InsertJob(Queued("j-1"));
  EXPECT_FALSE(inserted.ok());
  EXPECT_NE(inserted.status().code(), absl::StatusCode::kAborted) << inserted.status();
  EXPECT_EQ(s.Exec("SELECT last_value FROM kbench_test_attempts"), "1");
}

TEST_F(PostgresStoreTest, ReplicasOnOneDatabaseNeverLeaseAJobTwice) {
  constexpr int kJobs = 120;
  constexpr int kThreadsPerReplica = 4;
  std::vector<std::unique_ptr<PostgresStore>> replicas;
  replicas.push_back(Open(kThreadsPerReplica));
  replicas.push_back(Open(kThreadsPerReplica));
  ASSERT_NE(replicas[0], nullptr);
  ASSERT_NE(replicas[1], nullptr);
  for (int i = 0; i < kJobs; ++i) Insert(*replicas[i % 2], "j-" + std::to_string(i), kT0 + i);
  absl::Mutex mu;
  std::vector<std::string> leased;
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    for (int t = 0; t < kThreadsPerReplica; ++t) {
      threads.emplace_back([&, r, t] {
        const std::string worker = "w-" + std::to_string(r) + "-" + std::to_string(t);
        for (int n = 0;; ++n) {
          auto lease = replicas[r]->LeaseNextJob(
              worker, [](const v1::JobSpec&) { return true; }, kT0 + 1000, kTtl, worker + "-l" + std::to_string(n));
          ASSERT_TRUE(lease.ok()) << lease.status();
          if (!lease->has_value()) return;
          absl::MutexLock lock(&mu);
          leased.push_back((*lease)->job.job_id());
        }
      });
    }
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(leased.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(std::set<std::string>(leased.begin(), leased.end()).size(), static_cast<size_t>(kJobs));
  auto counts = replicas[0]->CountJobsByState();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)[v1::RUNNING], kJobs);
  EXPECT_EQ((*counts)[v1::QUEUED], 0);
}

// The grant statement's claim across replicas, with workers of two kinds: the oldest 100 jobs (more
// than a page of the queue read and than one grant's candidates) only H100 workers can run. Every job
// is granted once, and only to a worker that can run it.
TEST_F(PostgresStoreTest, ReplicasGrantEachJobOnceToAWorkerThatCanRunIt) {
  constexpr int kJobs = 160;
  constexpr int kHead = 100;
  std::vector<std::unique_ptr<PostgresStore>> replicas;
  replicas.push_back(Open(4));
  replicas.push_back(Open(4));
  ASSERT_NE(replicas[0], nullptr);
  ASSERT_NE(replicas[1], nullptr);
  std::map<std::string, std::string> model_of;
  for (int i = 0; i < kJobs; ++i) {
    v1::Job job;
    job.set_job_id("j-" + std::to_string(i));
    job.set_state(v1::QUEUED);
    job.set_created_unix_ms(kT0 + i);
    *job.mutable_spec() = testing::RmsnormSpec();
    job.mutable_spec()->mutable_selector()->set_model(i < kHead || i % 2 == 0 ? "H100" : "A100");
    model_of[job.job_id()] = job.spec().selector().model();
    ASSERT_TRUE(replicas[i % 2]->InsertJob(job).ok());
  }
  absl::Mutex mu;
  std::vector<std::pair<std::string, std::string>> granted;  // (worker's model, job id)
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    for (const std::string model : {"H100", "A100"}) {
      for (int t = 0; t < 2; ++t) {
        threads.emplace_back([&, r, model, t] {
          const std::string worker = "w-" + std::to_string(r) + "-" + model + "-" + std::to_string(t);
          auto can_run = [model](const v1::JobSpec& spec) { return spec.selector().model() == model; };
          for (int n = 0;; ++n) {
            auto lease = replicas[r]->LeaseNextJob(worker, can_run, kT0 + 1000, kTtl, worker + "-l" + std::to_string(n));
            ASSERT_TRUE(lease.ok()) << lease.status();
            if (!lease->has_value()) return;
            absl::MutexLock lock(&mu);
            granted.emplace_back(model, (*lease)->job.job_id());
          }
        });
      }
    }
  }
  for (auto& t : threads) t.join();
  std::set<std::string> ids;
  for (const auto& [model, id] : granted) {
    EXPECT_TRUE(ids.insert(id).second) << id << " granted twice";
    EXPECT_EQ(model_of[id], model) << id;
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kJobs));
  auto counts = replicas[0]->CountJobsByState();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)[v1::RUNNING], kJobs);
}

// Every lease poll reads the queue's head (pg::QueuePageSql). Under the generic plan PostgreSQL
// caches for a prepared statement after a few executions it must still walk jobs_by_state from the
// head, not every job ever submitted: with thousands of finished jobs (and their statistics), a plan
// through jobs_by_created read them all on every poll.
TEST_F(PostgresStoreTest, TheQueuePageWalksTheQueueUnderACachedGenericPlan) {
  auto store = Open(1);  // Creates the schema.
  ASSERT_NE(store, nullptr);
  Session s(uri_);
  s.Exec(
      "INSERT INTO jobs (job_id, spec, state, created_ms) SELECT 'j-' || g, '\\x00'::bytea, " +
      std::to_string(v1::SUCCEEDED) + ", g FROM generate_series(1, 5000) g");
  s.Exec("ANALYZE jobs");
  s.Exec("SET plan_cache_mode = force_generic_plan");
  s.Exec("PREPARE page(int8, int8, int8) AS " + pg::QueuePageSql());
  const std::string plan = s.Lines("EXPLAIN EXECUTE page(0, 0, 64)");
  EXPECT_NE(plan.find("jobs_by_state"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("jobs_by_created"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("Seq Scan"), std::string::npos) << plan;
}

TEST_F(PostgresStoreTest, ReplicasRequeueAnExpiredLeaseOnce) {
  auto a = Open();
  auto b = Open();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  Insert(*a, "j-1", kT0);
  ASSERT_TRUE(a->LeaseNextJob("w-1", [](const v1::JobSpec&) { return true; }, kT0, 1000, "l-1")->has_value());
  std::vector<Transition> moved_a, moved_b;
  std::thread ta([&] { moved_a = *a->RequeueExpired(kT0 + 1000, 3); });
  std::thread tb([&] { moved_b = *b->RequeueExpired(kT0 + 1000, 3); });
  ta.join();
  tb.join();
  EXPECT_EQ(moved_a.size() + moved_b.size(), 1u);
  auto job = a->GetJob("j-1");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), v1::QUEUED);
  EXPECT_EQ(job->attempts(), 1);
}

// The fleet view's read (fleet_cache.h) asks for the registrations it does not hold: a row whose
// registration the caller holds at its version comes without it, a heartbeat keeps the version, a
// registration again (here or through another replica) gives a new one and the new bytes. Fails if
// the store sends every registration on every read, or one left out after it changed.
TEST_F(PostgresStoreTest, WorkerRowsLeaveOutTheRegistrationsTheCallerHolds) {
  auto a = Open();
  auto b = Open();  // Another replica.
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  v1::WorkerInfo one = testing::CpuWorker("one"), two = testing::CpuWorker("two");
  one.set_worker_id("w-1");
  two.set_worker_id("w-2");
  ASSERT_TRUE(a->UpsertWorker(one, kT0).ok());
  ASSERT_TRUE(a->UpsertWorker(two, kT0).ok());
  absl::StatusOr<std::vector<WorkerRow>> all = a->ListWorkerRows(nullptr);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].worker_id, "w-1");
  EXPECT_EQ((*all)[0].registration, one.SerializeAsString());
  EXPECT_FALSE((*all)[0].registration_left_out);
  EXPECT_NE((*all)[0].registration_version, 0);
  EXPECT_NE((*all)[0].registration_version, (*all)[1].registration_version);
  std::map<std::string, int64_t> held = {{"w-1", (*all)[0].registration_version},
                                         {"w-2", (*all)[1].registration_version}};
  auto have = [&](const std::string& id, int64_t version) { return held.count(id) > 0 && held.at(id) == version; };

  ASSERT_TRUE(a->Heartbeat("w-1", kT0 + 2000).ok());
  absl::StatusOr<std::vector<WorkerRow>> beat = a->ListWorkerRows(have);
  ASSERT_TRUE(beat.ok()) << beat.status();
  ASSERT_EQ(beat->size(), 2u);
  for (const WorkerRow& w : *beat) {
    EXPECT_TRUE(w.registration_left_out) << w.worker_id;
    EXPECT_TRUE(w.registration.empty()) << w.worker_id;
    EXPECT_EQ(w.registration_version, held.at(w.worker_id));
  }
  EXPECT_EQ((*beat)[0].last_heartbeat_unix_ms, kT0 + 2000);  // Heartbeats and states always come.
  EXPECT_EQ((*beat)[1].last_heartbeat_unix_ms, kT0);

  v1::WorkerInfo again = testing::CpuWorker("two-again");
  again.set_worker_id("w-2");
  ASSERT_TRUE(b->UpsertWorker(again, kT0 + 3000).ok());
  absl::StatusOr<std::vector<WorkerRow>> changed = a->ListWorkerRows(have);
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_EQ(changed->size(), 2u);
  EXPECT_TRUE((*changed)[0].registration_left_out);
  const WorkerRow& w2 = (*changed)[1];
  EXPECT_EQ(w2.worker_id, "w-2");
  EXPECT_FALSE(w2.registration_left_out);
  EXPECT_EQ(w2.registration, again.SerializeAsString());
  EXPECT_NE(w2.registration_version, held.at("w-2"));
  EXPECT_NE(w2.registration_version, 0);
  EXPECT_EQ(w2.last_heartbeat_unix_ms, kT0 + 3000);

  // A worker the caller has never seen comes with its registration.
  v1::WorkerInfo three = testing::CpuWorker("three");
  three.set_worker_id("w-3");
  ASSERT_TRUE(b->UpsertWorker(three, kT0).ok());
  held["w-2"] = w2.registration_version;
  absl::StatusOr<std::vector<WorkerRow>> joined = a->ListWorkerRows(have);
  ASSERT_TRUE(joined.ok()) << joined.status();
  ASSERT_EQ(joined->size(), 3u);
  EXPECT_TRUE((*joined)[1].registration_left_out);
  EXPECT_EQ((*joined)[2].worker_id, "w-3");
  EXPECT_EQ((*joined)[2].registration, three.SerializeAsString());
}

// The fleet view on PostgreSQL reads each registration once: a refresh after heartbeats reads none
// (and shares the parsed registrations), one after a registration through another replica reads that
// one. Fails if a refresh reads every registration again, or serves a changed one from the old view.
TEST_F(PostgresStoreTest, TheFleetViewReadsOnlyTheRegistrationsThatChanged) {
  auto here = Open();
  auto other = Open();
  ASSERT_NE(here, nullptr);
  ASSERT_NE(other, nullptr);
  for (const char* name : {"a", "b", "c"}) {
    v1::WorkerInfo w = testing::CpuWorker(name);
    w.set_worker_id(std::string("w-") + name);
    ASSERT_TRUE(here->UpsertWorker(w, kT0).ok());
  }
  int registrations_read = 0;
  FleetCache cache(std::chrono::hours(1), [&](Store* store, const HaveRegistration& have) {
    absl::StatusOr<std::vector<WorkerRow>> rows = store->ListWorkerRows(have);
    if (rows.ok())
      for (const WorkerRow& w : *rows) registrations_read += w.registration_left_out ? 0 : 1;
    return rows;
  });
  absl::StatusOr<FleetCache::View> first = cache.Get(here.get(), FleetCache::Want::kFresh);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(registrations_read, 3);

  ASSERT_TRUE(here->Heartbeat("w-b", kT0 + 2000).ok());
  absl::StatusOr<FleetCache::View> second = cache.Get(here.get(), FleetCache::Want::kFresh);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(registrations_read, 3);
  EXPECT_EQ(second->fleet->parsed(), 0u);
  for (const char* id : {"w-a", "w-b", "w-c"}) EXPECT_EQ(second->fleet->Find(id), first->fleet->Find(id)) << id;
  EXPECT_EQ(second->fleet->FindWorker("w-b")->last_heartbeat_unix_ms, kT0 + 2000);

  v1::WorkerInfo c = testing::CpuWorker("c");
  c.clear_catalog();
  *c.add_catalog() = testing::VectorAddOp();
  c.set_worker_id("w-c");
  ASSERT_TRUE(other->UpsertWorker(c, kT0 + 3000).ok());
  absl::StatusOr<FleetCache::View> third = cache.Get(here.get(), FleetCache::Want::kFresh);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(registrations_read, 4);
  EXPECT_EQ(third->fleet->parsed(), 1u);
  EXPECT_EQ(third->fleet->Find("w-a"), first->fleet->Find("w-a"));
  const v1::WorkerInfo* changed = third->fleet->Find("w-c");
  ASSERT_NE(changed, nullptr);
  ASSERT_EQ(changed->catalog_size(), 1);
  EXPECT_EQ(changed->catalog(0).name(), "vector_add");
  EXPECT_EQ(changed->worker_id(), "w-c");
}

TEST(PostgresUri, RecognizesBothSchemes) {
  EXPECT_TRUE(IsPostgresUri("postgresql://u@h:5432/db"));
  EXPECT_TRUE(IsPostgresUri("postgres://h/db"));
  EXPECT_FALSE(IsPostgresUri("./kbench.db"));
  EXPECT_FALSE(IsPostgresUri("/var/lib/postgresql.db"));
}

}  // namespace
}  // namespace kbench::server

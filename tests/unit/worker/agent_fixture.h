// The agent's tests' fixture: an in-memory Coordinator served on loopback (or a private unix
// socket) and a one-device CPU worker node whose agent talks to it.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "fake_backend.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "test_ops.h"
#include "worker/agent/agent.h"
#include "worker/cpu/cpu_backend.h"

namespace kbench::worker::testing {

using namespace std::chrono_literals;

// An in-memory coordinator. Every handler notifies `cv` after changing state, and tests wait on
// conditions over that state.
class FakeCoordinator final : public v1::Coordinator::Service {
 public:
  grpc::Status RegisterWorker(grpc::ServerContext*, const v1::RegisterWorkerRequest* req,
                              v1::RegisterWorkerResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu);
    requested_ids.push_back(req->info().worker_id());
    // Keeps an id the worker asks for, as the real one does.
    const std::string id = req->info().worker_id().empty() ? "w-" + std::to_string(++next_id) : req->info().worker_id();
    workers.insert(id);
    last_info = req->info();
    resp->set_worker_id(id);
    resp->set_heartbeat_interval_ms(20);
    cv.notify_all();
    return grpc::Status::OK;
  }
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest* req, v1::HeartbeatResponse*) override {
    std::unique_lock<std::mutex> lock(mu);
    ++heartbeats;
    cv.notify_all();
    if (!workers.contains(req->worker_id())) {
      // A stale answer: NOT_FOUND arrives only after another call has registered the same id again.
      if (late_not_found) cv.wait_for(lock, 20s, [&] { return workers.contains(req->worker_id()); });
      ++not_found_heartbeats;
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown worker");
    }
    return grpc::Status::OK;
  }
  grpc::Status LeaseJob(grpc::ServerContext* ctx, const v1::LeaseJobRequest* req, v1::LeaseJobResponse* resp) override {
    std::unique_lock<std::mutex> lock(mu);
    ++lease_calls;
    last_wait_ms = req->wait_ms();
    cv.notify_all();
    if (!workers.contains(req->worker_id())) return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown worker");
    // The long poll, as the coordinator holds it: until a job is queued, the wait ends or the caller cancels.
    if (queue.empty() && hold_polls && req->wait_ms() > 0) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(req->wait_ms());
      ++held_now;
      cv.notify_all();
      while (queue.empty() && !ctx->IsCancelled() && std::chrono::steady_clock::now() < until)
        cv.wait_for(lock, 5ms);
      --held_now;
      if (ctx->IsCancelled()) {
        ++held_cancelled;
        cv.notify_all();
        return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
      }
      if (queue.empty()) {
        resp->set_held_ms(req->wait_ms());
        return grpc::Status::OK;
      }
    }
    if (queue.empty()) return grpc::Status::OK;
    v1::Job job = queue.front();
    queue.pop_front();
    job.set_attempts(job.attempts() + 1);
    job.set_worker_id(req->worker_id());
    resp->set_granted(true);
    *resp->mutable_job() = job;
    resp->set_lease_id("lease-" + job.job_id());
    resp->set_lease_expires_unix_ms(LeaseExpiry());
    leases.insert(resp->lease_id());
    cv.notify_all();
    return grpc::Status::OK;
  }
  grpc::Status ReportProgress(grpc::ServerContext*, const v1::ReportProgressRequest* req,
                              v1::ReportProgressResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu);
    if (!leases.contains(req->lease_id())) return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "no lease");
    if (failing_reports > 0) {
      --failing_reports;
      cv.notify_all();
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "coordinator restarting");
    }
    if (refuse_results && req->results_size() > 0)
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "results[0].index: 999 is past the job's 1 results");
    progress.push_back(req->progress());
    for (const auto& r : req->results()) results.push_back(r);
    resp->set_cancelled(cancel_jobs);
    resp->set_lease_expires_unix_ms(LeaseExpiry());
    cv.notify_all();
    return grpc::Status::OK;
  }
  grpc::Status CompleteJob(grpc::ServerContext*, const v1::CompleteJobRequest* req, v1::CompleteJobResponse*) override {
    std::lock_guard<std::mutex> lock(mu);
    if (!leases.contains(req->lease_id())) return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "no lease");
    leases.erase(req->lease_id());
    completions.push_back(*req);
    cv.notify_all();
    return grpc::Status::OK;
  }

  void Enqueue(const std::string& id, const v1::JobSpec& spec) {
    std::lock_guard<std::mutex> lock(mu);
    v1::Job job;
    job.set_job_id(id);
    *job.mutable_spec() = spec;
    queue.push_back(job);
    cv.notify_all();
  }
  int64_t LeaseExpiry() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               (std::chrono::system_clock::now() + lease_ttl).time_since_epoch())
        .count();
  }
  template <class Pred>
  bool WaitUntil(Pred pred) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, 20s, pred);
  }

  std::mutex mu;
  std::condition_variable cv;
  int next_id = 0;
  int heartbeats = 0;
  int not_found_heartbeats = 0;
  bool late_not_found = false;  // A heartbeat of an unknown id is answered once the id is known again.
  bool hold_polls = false;      // Holds a LeaseJob with wait_ms, as the coordinator does; else answers at once.
  int held_now = 0;             // Lease calls being held.
  int held_cancelled = 0;       // Held lease calls their caller cancelled.
  int last_wait_ms = -1;        // The last LeaseJob's wait_ms.
  int lease_calls = 0;
  bool cancel_jobs = false;
  int failing_reports = 0;  // The next reports fail with UNAVAILABLE.
  bool refuse_results = false;  // Reports that carry results fail with INVALID_ARGUMENT.
  std::chrono::milliseconds lease_ttl{30'000};
  std::vector<std::string> requested_ids;
  std::set<std::string> workers, leases;
  v1::WorkerInfo last_info;
  std::deque<v1::Job> queue;
  std::vector<v1::Progress> progress;
  std::vector<v1::Result> results;
  std::vector<v1::CompleteJobRequest> completions;
};

// A unix socket address in a fresh private folder: nothing listens there until a test serves it, and
// no other process can take it meanwhile (as one could a TCP port freed for a later bind).
inline std::string PrivateSocketAddress() {
  char dir[] = "/tmp/kbench-agent-test.XXXXXX";
  if (mkdtemp(dir) == nullptr) return "unix:/nonexistent/kbench-agent-test.sock";
  return std::string("unix:") + dir + "/coordinator.sock";
}

// A fake coordinator served on 127.0.0.1 at a port it picks, or at `address`.
struct Served {
  explicit Served(const std::string& address = "127.0.0.1:0") {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &bound);
    builder.RegisterService(&fake);
    server = builder.BuildAndStart();
  }
  ~Served() { server->Shutdown(std::chrono::system_clock::now()); }
  FakeCoordinator fake;
  std::unique_ptr<grpc::Server> server;
  int bound = 0;
};

inline v1::JobSpec TinySpec(std::vector<std::string> variants) {
  v1::JobSpec spec;
  spec.set_op("scale");
  for (auto& v : variants) spec.add_variants(v);
  spec.add_dtypes(v1::DTYPE_F32);
  *spec.mutable_settings() = testing::TinySettings();
  return spec;
}

class AgentTest : public ::testing::Test {
 protected:
  AgentTest()
      : node_(WorkerConfig{.name = "agent-test"}, std::make_unique<CpuBackend>(CpuBackendOptions{}, testing::TestHost()),
              testing::TestRegistry()) {}

  std::unique_ptr<Agent> StartAgent(int port) { return StartAgent("127.0.0.1:" + std::to_string(port)); }
  std::unique_ptr<Agent> StartAgent(const std::string& address, std::chrono::milliseconds retry = 10ms,
                                    std::chrono::milliseconds rpc_timeout = 5s,
                                    std::chrono::milliseconds lease_wait = 10s) {
    AgentConfig config;
    config.lease_wait = lease_wait;
    config.coordinator.address = address;
    config.retry_initial = config.idle_initial = retry;
    config.retry_max = config.idle_max = std::max(retry, std::chrono::milliseconds(50));
    config.rpc_timeout = rpc_timeout;
    config.on_registered = [this](const std::string& id) {
      std::lock_guard<std::mutex> lock(mu_);
      registered_.push_back(id);
    };
    auto agent = std::make_unique<Agent>(config, node_);
    agent->Start();
    return agent;
  }

  WorkerNode node_;
  std::mutex mu_;
  std::vector<std::string> registered_;
};

}  // namespace kbench::worker::testing

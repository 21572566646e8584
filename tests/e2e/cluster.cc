#include "cluster.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <thread>

#include "absl/strings/ascii.h"
#include "api/channel.h"
#include "gtest/gtest.h"

namespace kbench::e2e {

Cluster::Cluster() {
  char tmpl[] = "/tmp/kbench-e2e.XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
}

Cluster::~Cluster() {
  for (auto& w : workers_) w.reset();
  coordinator_.reset();
  if (!getenv("KBENCH_E2E_KEEP")) std::filesystem::remove_all(dir_);
}

std::string Cluster::StartCoordinator(std::vector<std::string> extra_flags) {
  std::vector<std::string> argv = {KBENCH_COORDINATOR_BIN, "--listen", "127.0.0.1:0", "--db", dir_ + "/kbench.db",
                                   "--metrics-listen", "127.0.0.1:0"};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  coordinator_ = std::make_unique<Process>(argv, dir_ + "/coordinator." + std::to_string(coordinator_starts_++) + ".log");
  auto addr = coordinator_->WaitForLine("kbench-coordinator listening on", std::chrono::seconds(60));
  if (!addr) throw std::runtime_error("coordinator did not start: " + coordinator_->Log());
  address_ = *addr;
  stub_ = v1::Coordinator::NewStub(api::MakeChannel({address_, ""}));
  return address_;
}

int Cluster::StartWorker(const std::string& name, std::vector<std::string> extra_flags) {
  const int i = static_cast<int>(workers_.size());
  std::vector<std::string> argv = {KBENCH_WORKER_BIN, "--coordinator", address_, "--listen", "127.0.0.1:0", "--name", name,
                                   "--backend", "cpu", "--quick-calibration", "--calibration-cache", dir_ + "/calibration"};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  workers_.push_back(std::make_unique<Process>(argv, dir_ + "/worker-" + name + ".log"));
  auto id = workers_.back()->WaitForLine("kbench-worker registered as", std::chrono::seconds(120));
  if (!id) throw std::runtime_error("worker did not register: " + workers_.back()->Log());
  worker_ids_.push_back(*id);
  return i;
}

CommandResult Cluster::Client(std::vector<std::string> args) {
  args.insert(args.begin(), {KBENCH_CLIENT_BIN, "--coordinator", address_});
  return RunCommand(args);
}

std::string Cluster::Submit(std::vector<std::string> args) {
  args.insert(args.begin(), "submit");
  const CommandResult r = Client(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return std::string(absl::StripAsciiWhitespace(r.out));
}

v1::Coordinator::Stub& Cluster::stub() { return *stub_; }

v1::Job Cluster::WaitForJob(const std::string& job_id, bool (*done)(const v1::Job&), std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  v1::Job job;
  while (std::chrono::steady_clock::now() < deadline) {
    v1::GetJobRequest req;
    req.set_job_id(job_id);
    auto ctx = api::MakeContext({address_, ""}, std::chrono::seconds(5));
    if (stub_->GetJob(ctx.get(), req, &job).ok() && done(job)) return job;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // polling a remote state, as a client does
  }
  return job;
}

v1::GetResultsResponse Cluster::Results(const std::string& job_id) {
  v1::GetResultsRequest req;
  req.set_job_id(job_id);
  req.set_include_samples(true);
  v1::GetResultsResponse resp;
  auto ctx = api::MakeContext({address_, ""}, std::chrono::seconds(30));
  auto s = stub_->GetResults(ctx.get(), req, &resp);
  if (!s.ok()) throw std::runtime_error("GetResults: " + s.error_message());
  return resp;
}

}  // namespace kbench::e2e

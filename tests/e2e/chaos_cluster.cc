// Starting, killing and restarting the chaos test's processes.
#include "chaos_cluster.h"

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/channel.h"

namespace kbench::e2e {
namespace {

// Generous: a loaded 2-core machine may take long to start a process, never this long.
constexpr std::chrono::seconds kStartTimeout{120};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::vector<pid_t> ChildrenNamed(pid_t parent, const std::string& comm) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    const std::string stat = ReadAll(entry.path() / "stat");
    const size_t open = stat.find('(');
    const size_t close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = 0;
    pid_t ppid = 0;
    if (rest >> state >> ppid && ppid == parent && stat.substr(open + 1, close - open - 1) == comm) out.push_back(pid);
  }
  return out;
}

ChaosCluster::ChaosCluster(std::string dir, std::string db, std::vector<std::string> coordinator_flags)
    : dir_(std::move(dir)), db_(std::move(db)), coordinator_flags_(std::move(coordinator_flags)) {
  if (db_.empty()) db_ = dir_ + "/kbench.db";
}

int ChaosCluster::WorkerIndex(const std::string& worker_id) const {
  for (size_t i = 0; i < worker_ids_.size(); ++i)
    if (worker_ids_[i] == worker_id) return static_cast<int>(i);
  return -1;
}

ChaosCluster::~ChaosCluster() {
  workers_.clear();  // SIGKILL each (Process's destructor); their runners see their pipes close and exit.
  coordinator_.reset();
}

void ChaosCluster::StartCoordinator() {
  const std::string log = absl::StrCat(dir_, "/coordinator.", starts_++, ".log");
  std::vector<std::string> argv = {KBENCH_COORDINATOR_BIN, absl::StrCat("--listen=127.0.0.1:", port_), "--db=" + db_,
                                   "--metrics-listen="};
  argv.insert(argv.end(), coordinator_flags_.begin(), coordinator_flags_.end());
  coordinator_ = std::make_unique<Process>(argv, log);
  logs_.push_back(log);
  const std::optional<std::string> address = coordinator_->WaitForLine("kbench-coordinator listening on", kStartTimeout);
  if (!address) {
    const std::string why = coordinator_->Log();
    coordinator_.reset();
    throw std::runtime_error("coordinator did not start:\n" + why);
  }
  if (port_ == 0) {
    // Later starts bind the same port: the workers were told this address.
    const size_t colon = address->rfind(':');
    port_ = std::atoi(address->c_str() + colon + 1);
    address_ = *address;
    stub_ = v1::Coordinator::NewStub(api::MakeChannel({address_, ""}));
  }
}

void ChaosCluster::KillCoordinator() {
  if (coordinator_ == nullptr) return;
  coordinator_->Signal(SIGKILL);
  coordinator_->Wait();
  coordinator_.reset();
}

void ChaosCluster::StartWorker(int i) {
  if (i >= static_cast<int>(workers_.size())) {
    workers_.resize(static_cast<size_t>(i) + 1);
    worker_ids_.resize(static_cast<size_t>(i) + 1);
  }
  const std::string log = absl::StrCat(dir_, "/worker-", i, ".", logs_.size(), ".log");
  std::vector<std::string> argv = {KBENCH_WORKER_BIN, "--coordinator", address_, "--listen", "127.0.0.1:0",
                                   "--name", absl::StrCat("chaos-", i), "--backend", "cpu", "--quick-calibration",
                                   "--calibration-cache", dir_ + "/calibration"};
  workers_[static_cast<size_t>(i)] = std::make_unique<Process>(argv, log);
  logs_.push_back(log);
  const std::optional<std::string> id = workers_[static_cast<size_t>(i)]->WaitForLine("kbench-worker registered as",
                                                                                     kStartTimeout);
  if (!id)
    throw std::runtime_error(absl::StrCat("worker ", i, " did not register:\n", workers_[static_cast<size_t>(i)]->Log()));
  worker_ids_[static_cast<size_t>(i)] = *id;
}

void ChaosCluster::KillWorker(int i) {
  Process& w = *workers_.at(static_cast<size_t>(i));
  w.Signal(SIGKILL);
  w.Wait();
}

bool ChaosCluster::KillRunnerOf(int i) {
  Process& w = *workers_.at(static_cast<size_t>(i));
  const std::vector<pid_t> runners = ChildrenNamed(w.pid(), "kbench-runner");
  if (runners.empty()) return false;
  kill(runners.front(), SIGKILL);
  return true;
}

std::string ChaosCluster::Logs() const {
  std::string out;
  for (const std::string& path : logs_) {
    std::string text = ReadAll(path);
    if (text.size() > 3000) text = "..." + text.substr(text.size() - 3000);
    absl::StrAppend(&out, "==== ", path, "\n", text, "\n");
  }
  return out;
}

}  // namespace kbench::e2e

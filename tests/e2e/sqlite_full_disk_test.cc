// SQLite on a full disk: the real coordinator keeps its database on a tiny filesystem, which the test
// fills. Submit must then fail with a clear error (RESOURCE_EXHAUSTED naming the database and its
// disk), reads must go on working, space freed must be used again without a restart, and a
// coordinator killed while the disk is full must leave a database that passes PRAGMA integrity_check
// and holds every job it accepted.
// The filesystem is a tmpfs mounted in a private mount namespace of this test process (root; the
// namespace ends with the process). Where that cannot be done, the coordinator runs under a file-size
// limit instead (RLIMIT_FSIZE with SIGXFSZ ignored: writes past it fail with EFBIG), which proves the
// same except the recovery after freeing space. KBENCH_FULL_DISK_MODE=fsize forces that mode.
#include <sched.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/channel.h"
#include "fixtures.h"
#include "gtest/gtest.h"
#include "kbench/v1/coordinator.grpc.pb.h"
#include "process.h"

namespace kbench::e2e {
namespace {

constexpr size_t kTmpfsBytes = size_t{8} << 20;
constexpr size_t kRoomBytes = size_t{256} << 10;   // Left free beside the filler file.
constexpr rlim_t kFileLimitBytes = 1 << 20;        // Fallback mode: the largest file the coordinator may write.
constexpr int kMaxSubmissions = 20000;             // Far more than either room holds.

// Mounts a tmpfs of kTmpfsBytes on dir, in a mount namespace of this process alone. Must run before
// any thread starts (unshare(CLONE_NEWNS) refuses a process whose threads share its filesystem info).
absl::Status MountTinyDisk(const std::string& dir) {
  if (const char* mode = std::getenv("KBENCH_FULL_DISK_MODE"); mode != nullptr && std::string(mode) == "fsize")
    return absl::FailedPreconditionError("KBENCH_FULL_DISK_MODE=fsize");
  if (unshare(CLONE_NEWNS) != 0) return absl::PermissionDeniedError(absl::StrCat("unshare: ", strerror(errno)));
  // Nothing mounted here may reach the host's namespace.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return absl::PermissionDeniedError(absl::StrCat("mount --make-rprivate /: ", strerror(errno)));
  const std::string options = absl::StrCat("size=", kTmpfsBytes, ",mode=0700");
  if (mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0)
    return absl::PermissionDeniedError(absl::StrCat("mount -t tmpfs: ", strerror(errno)));
  return absl::OkStatus();
}

// Fills dir's filesystem with `path` until `room` bytes are left.
void Fill(const std::string& dir, const std::string& path, size_t room) {
  struct statvfs fs {};
  ASSERT_EQ(statvfs(dir.c_str(), &fs), 0);
  const size_t free_bytes = static_cast<size_t>(fs.f_bavail) * fs.f_frsize;
  ASSERT_GT(free_bytes, room);
  std::ofstream out(path, std::ios::binary);
  const std::string block(64 << 10, 'f');
  for (size_t left = free_bytes - room; left > 0;) {
    const size_t n = std::min(left, block.size());
    out.write(block.data(), static_cast<std::streamsize>(n));
    left -= n;
  }
  out.close();
  ASSERT_TRUE(out.good()) << "writing the filler file";
}

class FullDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kbench-fulldisk.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    disk_ = dir_ + "/disk";
    std::filesystem::create_directory(disk_);
    const absl::Status mounted = MountTinyDisk(disk_);
    tmpfs_ = mounted.ok();
    std::cout << (tmpfs_ ? "database on a private tmpfs of " + std::to_string(kTmpfsBytes) + " bytes"
                         : "no tmpfs (" + std::string(mounted.message()) + "): coordinator under RLIMIT_FSIZE")
              << "\n";
    db_ = disk_ + "/kbench.db";
  }
  void TearDown() override {
    coordinator_.reset();
    if (tmpfs_) umount2(disk_.c_str(), MNT_DETACH);
    if (!HasFailure()) std::filesystem::remove_all(dir_);
    else std::cerr << "full-disk test files kept in " << dir_ << "\n";
  }

  // Starts the coordinator on db_ (logs outside the tiny disk); under the file-size limit when asked.
  void Start(bool limited) {
    const std::vector<std::string> argv = {KBENCH_COORDINATOR_BIN, "--listen=127.0.0.1:0", "--db=" + db_,
                                           "--metrics-listen="};
    const std::string log = absl::StrCat(dir_, "/coordinator.", starts_++, ".log");
    if (limited) {
      // Inherited by the child: SIGXFSZ ignored (so writes past the limit fail with EFBIG instead of
      // killing it) and the limit itself; both put back for this process right after.
      struct sigaction ignore {}, previous {};
      ignore.sa_handler = SIG_IGN;
      rlimit old{};
      ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
      rlimit small = old;
      small.rlim_cur = kFileLimitBytes;
      sigaction(SIGXFSZ, &ignore, &previous);
      ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
      coordinator_ = std::make_unique<Process>(argv, log);
      setrlimit(RLIMIT_FSIZE, &old);
      sigaction(SIGXFSZ, &previous, nullptr);
    } else {
      coordinator_ = std::make_unique<Process>(argv, log);
    }
    const std::optional<std::string> address = coordinator_->WaitForLine("listening on", std::chrono::seconds(120));
    ASSERT_TRUE(address.has_value()) << coordinator_->Log();
    options_.address = *address;
    stub_ = v1::Coordinator::NewStub(api::MakeChannel(options_));
  }

  grpc::Status Submit(int n, std::string* job_id) {
    v1::SubmitRequest req;
    *req.mutable_spec() = server::testing::RmsnormSpec(64, 1024 + n);
    (*req.mutable_spec()->mutable_labels())["note"] = std::string(200, 'n');
    req.set_idempotency_key(absl::StrCat("full-", n));
    v1::SubmitResponse resp;
    auto ctx = api::MakeContext(options_, std::chrono::seconds(30));
    const grpc::Status s = stub_->Submit(ctx.get(), req, &resp);
    if (s.ok()) *job_id = resp.job_id();
    return s;
  }

  // Submits until a submission fails; returns that failure. Accepted ids go to accepted_.
  grpc::Status SubmitUntilFull() {
    for (int i = 0; i < kMaxSubmissions; ++i) {
      std::string id;
      const grpc::Status s = Submit(next_++, &id);
      if (!s.ok()) return s;
      accepted_.push_back(id);
    }
    return grpc::Status::OK;
  }

  void ExpectClearDiskError(const grpc::Status& s) {
    ASSERT_FALSE(s.ok()) << "the disk never filled";
    std::cout << "full: " << s.error_code() << " " << s.error_message() << "\n";
    if (tmpfs_) EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    else
      EXPECT_TRUE(s.error_code() == grpc::StatusCode::UNAVAILABLE ||
                  s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED)
          << s.error_code() << " " << s.error_message();
    EXPECT_NE(s.error_message().find("disk"), std::string::npos) << s.error_message();
    EXPECT_NE(s.error_message().find(db_), std::string::npos) << "the message should name the database: "
                                                              << s.error_message();
  }

  std::string dir_, disk_, db_;
  bool tmpfs_ = false;
  int starts_ = 0;
  int next_ = 0;
  std::vector<std::string> accepted_;
  std::unique_ptr<Process> coordinator_;
  api::ChannelOptions options_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

TEST_F(FullDiskTest, SubmitFailsClearlyAndTheDatabaseStaysWhole) {
  Start(/*limited=*/!tmpfs_);
  {
    v1::RegisterWorkerRequest req;
    *req.mutable_info() = server::testing::CpuWorker("full-disk-worker");
    v1::RegisterWorkerResponse resp;
    auto ctx = api::MakeContext(options_);
    ASSERT_TRUE(stub_->RegisterWorker(ctx.get(), req, &resp).ok());
  }
  const std::string filler = disk_ + "/filler";
  if (tmpfs_) ASSERT_NO_FATAL_FAILURE(Fill(disk_, filler, kRoomBytes));

  ExpectClearDiskError(SubmitUntilFull());
  ASSERT_FALSE(accepted_.empty()) << "not even one job fitted";
  // A full disk refuses writes, not reads.
  {
    v1::GetJobRequest req;
    req.set_job_id(accepted_.front());
    v1::Job job;
    auto ctx = api::MakeContext(options_);
    const grpc::Status s = stub_->GetJob(ctx.get(), req, &job);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(job.state(), v1::QUEUED);
  }
  if (tmpfs_) {
    // Space freed is used again, with no restart; then the disk is filled once more.
    std::filesystem::remove(filler);
    std::string id;
    const grpc::Status again = Submit(next_++, &id);
    ASSERT_TRUE(again.ok()) << again.error_message();
    accepted_.push_back(id);
    ASSERT_NO_FATAL_FAILURE(Fill(disk_, filler, kRoomBytes));
    ExpectClearDiskError(SubmitUntilFull());
  }

  // A crash while the disk is full.
  coordinator_->Signal(SIGKILL);
  coordinator_->Wait();
  if (tmpfs_) std::filesystem::remove(filler);

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  std::string integrity;
  std::set<std::string> stored;
  auto collect = [](void* out, int, char** values, char**) {
    static_cast<std::vector<std::string>*>(out)->push_back(values[0] != nullptr ? values[0] : "");
    return 0;
  };
  std::vector<std::string> rows;
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA integrity_check", collect, &rows, nullptr), SQLITE_OK);
  EXPECT_EQ(rows, std::vector<std::string>{"ok"});
  rows.clear();
  ASSERT_EQ(sqlite3_exec(db, "SELECT job_id FROM jobs", collect, &rows, nullptr), SQLITE_OK);
  sqlite3_close(db);
  stored.insert(rows.begin(), rows.end());
  EXPECT_EQ(stored.size(), accepted_.size()) << "jobs stored vs accepted";
  for (const std::string& id : accepted_) EXPECT_EQ(stored.count(id), 1u) << "accepted job " << id << " lost";

  // And the coordinator starts again on it and takes new jobs.
  Start(/*limited=*/false);
  std::string id;
  const grpc::Status after = Submit(next_++, &id);
  EXPECT_TRUE(after.ok()) << after.error_message();
  std::cout << accepted_.size() << " jobs accepted before the disk filled; all stored, integrity ok\n";
}

}  // namespace
}  // namespace kbench::e2e

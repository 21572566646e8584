// The kbench-coordinator binary: it prints its bound ports, serves, keeps jobs across a restart,
// stops cleanly on SIGTERM, and rejects bad flags with exit status 2.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "api/channel.h"
#include "fixtures.h"
#include "gtest/gtest.h"
#include "kbench/v1/coordinator.grpc.pb.h"

namespace kbench::server {
namespace {

struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;  // The child's stdout.
};

// Starts the binary with args; stdout comes back through a pipe, stderr is discarded.
Child Spawn(const std::vector<std::string>& args) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  Child c;
  c.pid = fork();
  if (c.pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    FILE* devnull = fopen("/dev/null", "w");
    if (devnull != nullptr) dup2(fileno(devnull), STDERR_FILENO);
    std::vector<char*> argv;
    std::vector<std::string> copy = args;
    copy.insert(copy.begin(), KBENCH_COORDINATOR_PATH);
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  c.out = fdopen(fds[0], "r");
  return c;
}

std::string ReadLine(FILE* f) {
  char buf[512];
  if (fgets(buf, sizeof buf, f) == nullptr) return "";
  std::string s(buf);
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

int Wait(Child& c) {
  int status = 0;
  waitpid(c.pid, &status, 0);
  fclose(c.out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string ReadAll(FILE* f) {
  std::string all;
  for (std::string line = ReadLine(f); !line.empty() || !feof(f); line = ReadLine(f)) all += line + "\n";
  return all;
}

// Starts a coordinator on port 0 and returns the address it printed.
std::string StartServing(Child* c, const std::string& db) {
  *c = Spawn({"--listen=127.0.0.1:0", "--db=" + db, "--metrics-listen", "127.0.0.1:0", "--lease-ttl-ms=5000"});
  const std::string listening = ReadLine(c->out);
  const std::string prefix = "kbench-coordinator listening on ";
  EXPECT_EQ(listening.rfind(prefix, 0), 0u) << listening;
  const std::string metrics = ReadLine(c->out);
  EXPECT_EQ(metrics.rfind("kbench-coordinator metrics on 127.0.0.1:", 0), 0u) << metrics;
  return listening.substr(std::min(prefix.size(), listening.size()));
}

TEST(CoordinatorBinary, ServesKeepsJobsAcrossRestartAndStopsOnSigterm) {
  const std::string db = testing::TempDbPath();
  Child c;
  api::ChannelOptions options;
  options.address = StartServing(&c, db);
  auto stub = v1::Coordinator::NewStub(api::MakeChannel(options));
  v1::RegisterWorkerRequest reg;
  *reg.mutable_info() = testing::CpuWorker("cpu");
  v1::RegisterWorkerResponse registered;
  ASSERT_TRUE(stub->RegisterWorker(api::MakeContext(options).get(), reg, &registered).ok());
  v1::SubmitRequest submit;
  *submit.mutable_spec() = testing::RmsnormSpec();
  v1::SubmitResponse submitted;
  grpc::Status s = stub->Submit(api::MakeContext(options).get(), submit, &submitted);
  ASSERT_TRUE(s.ok()) << s.error_message();
  kill(c.pid, SIGTERM);
  EXPECT_EQ(Wait(c), 0);

  options.address = StartServing(&c, db);
  stub = v1::Coordinator::NewStub(api::MakeChannel(options));
  v1::GetJobRequest get;
  get.set_job_id(submitted.job_id());
  v1::Job job;
  s = stub->GetJob(api::MakeContext(options).get(), get, &job);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(job.state(), v1::QUEUED);
  kill(c.pid, SIGINT);
  EXPECT_EQ(Wait(c), 0);
}

TEST(CoordinatorBinary, BadFlagsExitTwo) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--no-such-flag"}, {"--max-attempts=0"}, {"--lease-ttl-ms=soon"}, {"stray"}, {"--listen=nocolon"},
           {"--sqlite-synchronous=sometimes"}, {"--health-margin=1.5"}, {"--regression-alpha=0"},
           {"--baseline-results=0"}, {"--db-pool-size=0"}, {"--rpc-threads=0"}}) {
    Child c = Spawn(args);
    EXPECT_EQ(Wait(c), 2) << args[0];
  }
}

TEST(CoordinatorBinary, UnreachablePostgresExitsOne) {
  Child c = Spawn({"--listen=127.0.0.1:0", "--db=postgresql://kbench:secret@127.0.0.1:1/none?connect_timeout=2"});
  EXPECT_EQ(ReadAll(c.out), "");  // Never listened.
  EXPECT_EQ(Wait(c), 1);
}

TEST(CoordinatorBinary, HelpAnswers) {
  Child c = Spawn({"--help"});
  const std::string text = ReadAll(c.out);
  EXPECT_EQ(Wait(c), 0);
  EXPECT_NE(text.find("--lease-ttl-ms"), std::string::npos) << text;
  EXPECT_NE(text.find("--metrics-listen"), std::string::npos) << text;
  EXPECT_NE(text.find("postgresql://"), std::string::npos) << text;
  EXPECT_NE(text.find("--health-margin"), std::string::npos) << text;
  EXPECT_NE(text.find("--rpc-threads"), std::string::npos) << text;
}

}  // namespace
}  // namespace kbench::server

// kbench-coordinator's security flags, on the real binary: it refuses to listen beyond loopback
// without tokens unless --insecure, rejects bad security flags with exit status 2, and serves the
// token file and TLS it is given.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "../common/test_certs.h"
#include "api/channel.h"
#include "fixtures.h"
#include "gtest/gtest.h"
#include "kbench/v1/coordinator.grpc.pb.h"

namespace kbench::server {
namespace {

struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;  // The child's stdout.
  FILE* err = nullptr;  // Its stderr.
};

Child Spawn(const std::vector<std::string>& args) {
  int out[2], err[2];
  EXPECT_EQ(pipe(out), 0);
  EXPECT_EQ(pipe(err), 0);
  Child c;
  c.pid = fork();
  if (c.pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    std::vector<std::string> copy = args;
    copy.insert(copy.begin(), KBENCH_COORDINATOR_PATH);
    std::vector<char*> argv;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  c.out = fdopen(out[0], "r");
  c.err = fdopen(err[0], "r");
  return c;
}

std::string ReadLine(FILE* f) {
  char buf[1024];
  if (fgets(buf, sizeof buf, f) == nullptr) return "";
  std::string s(buf);
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

std::string ReadAll(FILE* f) {
  std::string all;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) all.append(buf, n);
  return all;
}

struct Exit {
  int status = -1;
  std::string out, err;
};

// Waits for the child, with everything it wrote.
Exit Finish(Child& c) {
  Exit e;
  e.out = ReadAll(c.out);
  e.err = ReadAll(c.err);
  int status = 0;
  waitpid(c.pid, &status, 0);
  fclose(c.out);
  fclose(c.err);
  e.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return e;
}

// The port of "kbench-coordinator listening on HOST:PORT"; 0 when the line is not that.
int ListeningPort(const std::string& line) {
  const std::string prefix = "kbench-coordinator listening on ";
  if (line.rfind(prefix, 0) != 0) return 0;
  return std::stoi(line.substr(line.rfind(':') + 1));
}

grpc::Status ListJobs(const api::ChannelOptions& o) {
  v1::ListJobsRequest req;
  v1::ListJobsResponse resp;
  return v1::Coordinator::NewStub(api::MakeChannel(o))->ListJobs(api::MakeContext(o, std::chrono::seconds(10)).get(),
                                                                  req, &resp);
}

TEST(CoordinatorSecurityBinary, BeyondLoopbackWithoutAuthenticationExitsTwo) {
  for (const char* listen : {"--listen=0.0.0.0:0", "--listen=[::]:0"}) {
    Child c = Spawn({listen, "--db=" + testing::TempDbPath(), "--metrics-listen="});
    Exit e = Finish(c);
    EXPECT_EQ(e.status, 2) << listen << "\n" << e.err;
    EXPECT_EQ(e.out, "");  // Never listened.
    EXPECT_NE(e.err.find("--insecure"), std::string::npos) << e.err;
    EXPECT_NE(e.err.find("--token-file"), std::string::npos) << e.err;
  }
}

TEST(CoordinatorSecurityBinary, WithInsecureItServesBeyondLoopback) {
  Child c = Spawn({"--listen=0.0.0.0:0", "--db=" + testing::TempDbPath(), "--metrics-listen=", "--insecure"});
  const std::string line = ReadLine(c.out);
  const int port = ListeningPort(line);
  ASSERT_GT(port, 0) << line;
  EXPECT_EQ(line.rfind("kbench-coordinator listening on 0.0.0.0:", 0), 0u) << line;
  api::ChannelOptions o;
  o.address = "127.0.0.1:" + std::to_string(port);
  grpc::Status s = ListJobs(o);
  EXPECT_TRUE(s.ok()) << s.error_message();
  kill(c.pid, SIGTERM);
  Exit e = Finish(c);
  EXPECT_EQ(e.status, 0) << e.err;
  EXPECT_NE(e.err.find("WARNING: --insecure"), std::string::npos) << e.err;
}

TEST(CoordinatorSecurityBinary, ServesItsTokenFileOverTls) {
  tls_testing::TestCerts certs;
  ASSERT_TRUE(certs.ok()) << certs.error();
  const std::string tokens = certs.Path("tokens");
  std::ofstream(tokens) << "admin-token-0123456789 admin ops\nsubmit-token-0123456789 submit ci\n";
  Child c = Spawn({"--listen=127.0.0.1:0", "--db=" + testing::TempDbPath(), "--metrics-listen=",
                   "--token-file=" + tokens, "--tls-cert=" + certs.Path("server.pem"),
                   "--tls-key=" + certs.Path("server.key"), "--rate-limit-per-second=100"});
  const std::string line = ReadLine(c.out);
  const int port = ListeningPort(line);
  ASSERT_GT(port, 0) << line;
  api::ChannelOptions o;
  o.address = "127.0.0.1:" + std::to_string(port);
  o.tls_ca_path = certs.Path("ca.pem");
  o.token = "admin-token-0123456789";
  grpc::Status s = ListJobs(o);
  EXPECT_TRUE(s.ok()) << s.error_message();
  o.token = "";
  EXPECT_EQ(ListJobs(o).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  o.token = "submit-token-0123456789";
  v1::RegisterWorkerRequest reg;
  *reg.mutable_info() = testing::CpuWorker("cpu");
  v1::RegisterWorkerResponse registered;
  s = v1::Coordinator::NewStub(api::MakeChannel(o))->RegisterWorker(api::MakeContext(o).get(), reg, &registered);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  api::ChannelOptions plaintext;
  plaintext.address = o.address;
  plaintext.token = "admin-token-0123456789";
  EXPECT_EQ(ListJobs(plaintext).error_code(), grpc::StatusCode::UNAVAILABLE);
  kill(c.pid, SIGTERM);
  Exit e = Finish(c);
  EXPECT_EQ(e.status, 0) << e.err;
  EXPECT_NE(e.err.find("TLS; 2 bearer tokens from " + tokens + "; rate limit 100 requests/s per token, burst 100"),
            std::string::npos)
      << e.err;
}

TEST(CoordinatorSecurityBinary, BadSecurityFlagsExitTwo) {
  const std::string dir = ::testing::TempDir();
  const std::string bad_tokens = dir + "/kbench-security-binary-bad-tokens";
  std::ofstream(bad_tokens) << "# ok so far\nadmin-token-0123456789 superuser\n";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"--token-file=" + bad_tokens}, bad_tokens + ":2: unknown role 'superuser'"},
           {{"--token-file=" + dir + "/no-such-tokens"}, "--token-file: cannot read"},
           {{"--tls-cert=" + dir + "/no-such.pem"}, "--tls-cert and --tls-key: give both"},
           {{"--tls-cert=" + dir + "/no-such.pem", "--tls-key=" + dir + "/no-such.key"}, "--tls-cert: cannot read"},
           {{"--tls-client-ca=" + dir + "/no-such-ca.pem"}, "--tls-client-ca needs --tls-cert"},
           {{"--rate-limit-per-second=5"}, "--rate-limit-per-second needs --token-file"},
           {{"--rate-burst=soon"}, "bad value 'soon' for --rate_burst"},
       }) {
    std::vector<std::string> args = {"--listen=127.0.0.1:0", "--db=" + testing::TempDbPath(), "--metrics-listen="};
    args.insert(args.end(), c.args.begin(), c.args.end());
    Child child = Spawn(args);
    Exit e = Finish(child);
    EXPECT_EQ(e.status, 2) << c.args[0] << "\n" << e.err;
    EXPECT_NE(e.err.find(c.message), std::string::npos) << e.err << "\nexpected: " << c.message;
    EXPECT_EQ(e.out, "");
  }
}

TEST(CoordinatorSecurityBinary, HelpListsTheSecurityFlags) {
  Child c = Spawn({"--help"});
  Exit e = Finish(c);
  EXPECT_EQ(e.status, 0);
  for (const char* flag : {"--tls-cert", "--tls-key", "--tls-client-ca", "--token-file", "--insecure",
                           "--rate-limit-per-second", "--rate-burst"})
    EXPECT_NE(e.out.find(std::string("\n  ") + flag + " "), std::string::npos) << flag << "\n" << e.out;
}

}  // namespace
}  // namespace kbench::server

// The Worker service under the coordinator's rules (server/auth/, as kbench-worker --listen serves
// it): without a token a call is refused, a token without the submit role may read but not run a
// job, the submit role runs one; and the rules' messages name the worker's own flags (--listen-*).
#include <fstream>

#include "api/channel.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/auth/server_security.h"
#include "test_ops.h"
#include "worker/agent/worker_service.h"
#include "worker/cpu/cpu_backend.h"

namespace kbench::worker {
namespace {

constexpr char kSubmitToken[] = "submit-0123456789abcdef";
constexpr char kWorkerToken[] = "worker-0123456789abcdef";

std::string WriteTokens(const std::string& text) {
  static int n = 0;
  const std::string path = ::testing::TempDir() + "/kbench-worker-auth-tokens-" + std::to_string(++n);
  std::ofstream(path) << text;
  return path;
}

class WorkerServiceAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = std::make_unique<CpuBackend>(CpuBackendOptions{}, testing::TestHost());
    v1::Calibration c;
    c.set_device_uuid(backend->device().uuid());
    c.set_copy_bytes_per_second(1e10);
    (*c.mutable_peak_flops_per_second())["f32"] = 1e11;
    backend->set_calibration(c);
    node_ = std::make_unique<WorkerNode>(WorkerConfig{.name = "auth-worker"}, std::move(backend),
                                         testing::TestRegistry());
    service_ = std::make_unique<WorkerService>(*node_);
    auto security = server::auth::ServerSecurity::Make(
        {.token_file = WriteTokens(std::string(kSubmitToken) + " submit\n" + kWorkerToken + " worker\n"),
         .flag_prefix = "listen-"},
        "127.0.0.1:0");
    ASSERT_TRUE(security.ok()) << security.status();
    security_ = std::move(*security);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", security_->credentials(), &port_);
    builder.RegisterService(security_->Guard(service_.get()));
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0);
  }
  void TearDown() override { server_->Shutdown(); }

  api::ChannelOptions Options(const std::string& token) const {
    return {.address = "127.0.0.1:" + std::to_string(port_), .token = token};
  }
  grpc::Status GetInfo(const std::string& token) {
    auto stub = v1::Worker::NewStub(api::MakeChannel(Options(token)));
    auto ctx = api::MakeContext(Options(token), std::chrono::seconds(30));
    v1::WorkerInfo info;
    return stub->GetInfo(ctx.get(), {}, &info);
  }
  // Runs a one-result job; its status, and the results in *results.
  grpc::Status RunJob(const std::string& token, int* results) {
    auto stub = v1::Worker::NewStub(api::MakeChannel(Options(token)));
    auto ctx = api::MakeContext(Options(token), std::chrono::seconds(120));
    v1::RunJobRequest request;
    request.mutable_spec()->set_op("scale");
    request.mutable_spec()->add_variants("cpu_good");
    request.mutable_spec()->add_dtypes(v1::DTYPE_F32);
    *request.mutable_spec()->mutable_settings() = testing::TinySettings();
    auto reader = stub->RunJob(ctx.get(), request);
    v1::RunJobEvent e;
    *results = 0;
    while (reader->Read(&e)) *results += e.has_result() ? 1 : 0;
    return reader->Finish();
  }

  std::unique_ptr<WorkerNode> node_;
  std::unique_ptr<WorkerService> service_;
  std::unique_ptr<server::auth::ServerSecurity> security_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

TEST_F(WorkerServiceAuthTest, NoTokenIsRefused) {
  EXPECT_EQ(GetInfo("").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  int results = -1;
  EXPECT_EQ(RunJob("", &results).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(results, 0);
  EXPECT_EQ(GetInfo("not-a-token-0123456789").error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(WorkerServiceAuthTest, RunningAJobTakesTheSubmitRole) {
  EXPECT_TRUE(GetInfo(kWorkerToken).ok());  // any token reads
  int results = -1;
  grpc::Status s = RunJob(kWorkerToken, &results);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  EXPECT_EQ(results, 0);
  s = RunJob(kSubmitToken, &results);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(results, 1);
}

TEST(WorkerServiceSecurity, TheRulesNameTheWorkersOwnFlags) {
  absl::StatusOr<std::unique_ptr<server::auth::ServerSecurity>> s =
      server::auth::ServerSecurity::Make({.flag_prefix = "listen-"}, "0.0.0.0:0");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("without --listen-token-file"), absl::string_view::npos) << s.status();
  EXPECT_NE(s.status().message().find("or --listen-insecure"), absl::string_view::npos) << s.status();
  s = server::auth::ServerSecurity::Make({.tls_cert_path = "/nonexistent/cert.pem", .flag_prefix = "listen-"},
                                         "127.0.0.1:0");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("--listen-tls-cert and --listen-tls-key: give both"), absl::string_view::npos)
      << s.status();
  s = server::auth::ServerSecurity::Make({.token_file = "/nonexistent/tokens", .flag_prefix = "listen-"},
                                         "127.0.0.1:0");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("--listen-token-file: cannot read '/nonexistent/tokens'"),
            absl::string_view::npos)
      << s.status();
}

}  // namespace
}  // namespace kbench::worker

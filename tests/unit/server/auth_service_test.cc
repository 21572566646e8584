// Bearer tokens, roles, rate limits and TLS on a real loopback server (port 0): the coordinator
// service behind ServerSecurity, as kbench-coordinator serves it, called through api::MakeChannel
// and api::MakeContext as kbench-client and kbench-worker call it.
#include <fstream>
#include <memory>
#include <string>

#include "../common/test_certs.h"
#include "api/channel.h"
#include "fake_clock.h"
#include "fixtures.h"
#include "google/protobuf/descriptor.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kbench/v1/coordinator.grpc.pb.h"
#include "server/auth/server_security.h"
#include "server/service/coordinator_service.h"
#include "server/store/sqlite_store.h"

namespace kbench::server {
namespace {

constexpr char kSubmitToken[] = "submit-token-0123456789";
constexpr char kWorkerToken[] = "worker-token-0123456789";
constexpr char kAdminToken[] = "admin-token-0123456789";

class AuthServiceTest : public ::testing::Test {
 protected:
  // Serves the coordinator on 127.0.0.1:0 with `security` (the token file is filled in when empty).
  void Start(auth::SecurityOptions security) {
    if (security.token_file.empty() && with_tokens_) {
      security.token_file = ::testing::TempDir() + "/kbench-auth-service-test-tokens";
      std::ofstream(security.token_file) << "# test tokens\n"
                                         << kSubmitToken << " submit ci\n"
                                         << kWorkerToken << " worker gpu-node\n"
                                         << kAdminToken << " admin ops\n";
    }
    auto store = SqliteStore::Open(testing::TempDbPath());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    coordinator_ = std::make_unique<Coordinator>(CoordinatorConfig{}, store_.get(), &clock_);
    service_ = std::make_unique<CoordinatorService>(coordinator_.get(), &gate_);
    // As kbench-coordinator wires it: admin changes are recorded with the caller's token name.
    service_->set_caller_name([this](const grpc::ServerContextBase& c) { return security_->CallerName(c); });
    auto made = auth::ServerSecurity::Make(security, "127.0.0.1:0", [this] { return now_; });
    ASSERT_TRUE(made.ok()) << made.status();
    security_ = *std::move(made);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", security_->credentials(), &port);
    builder.RegisterService(security_->Guard(service_.get()));
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port, 0);
    address_ = "127.0.0.1:" + std::to_string(port);
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(std::chrono::system_clock::now());
  }

  api::ChannelOptions Options(const std::string& token) const {
    api::ChannelOptions o;
    o.address = address_;
    o.token = token;
    return o;
  }

  // Each call on its own channel and stub, as a separate client would make it.
  grpc::Status ListJobs(const api::ChannelOptions& o) {
    v1::ListJobsRequest req;
    v1::ListJobsResponse resp;
    return v1::Coordinator::NewStub(api::MakeChannel(o))->ListJobs(api::MakeContext(o, std::chrono::seconds(10)).get(),
                                                                    req, &resp);
  }
  grpc::Status RegisterWorker(const api::ChannelOptions& o, const std::string& name) {
    v1::RegisterWorkerRequest req;
    *req.mutable_info() = testing::CpuWorker(name);
    v1::RegisterWorkerResponse resp;
    return v1::Coordinator::NewStub(api::MakeChannel(o))->RegisterWorker(api::MakeContext(o).get(), req, &resp);
  }
  grpc::Status Submit(const api::ChannelOptions& o) {
    v1::SubmitRequest req;
    *req.mutable_spec() = testing::RmsnormSpec(8, 16);
    v1::SubmitResponse resp;
    return v1::Coordinator::NewStub(api::MakeChannel(o))->Submit(api::MakeContext(o).get(), req, &resp);
  }
  // Workers the coordinator knows: whether a refused call reached it.
  size_t WorkerCount() {
    absl::StatusOr<std::vector<v1::WorkerStatus>> workers = coordinator_->ListWorkers();
    EXPECT_TRUE(workers.ok()) << workers.status();
    return workers.ok() ? workers->size() : 0;
  }

  bool with_tokens_ = true;
  auth::SteadyTime now_ = auth::SteadyTime() + std::chrono::hours(1);
  FakeClock clock_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<Coordinator> coordinator_;
  RequestGate gate_;
  std::unique_ptr<CoordinatorService> service_;
  std::unique_ptr<auth::ServerSecurity> security_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

TEST_F(AuthServiceTest, NoTokenOrAWrongOneIsUnauthenticated) {
  Start({});
  grpc::Status s = ListJobs(Options(""));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(s.error_message().find("missing bearer token"), std::string::npos) << s.error_message();
  s = ListJobs(Options("not-a-token-of-this-server"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(s.error_message(), "invalid bearer token");
  s = RegisterWorker(Options(""), "anonymous");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(WorkerCount(), 0u);
}

TEST_F(AuthServiceTest, ASubmitTokenCannotRegisterAWorkerButAWorkerTokenCan) {
  Start({});
  grpc::Status s = RegisterWorker(Options(kSubmitToken), "impostor");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(s.error_message().find("needs the worker or admin role"), std::string::npos) << s.error_message();
  EXPECT_EQ(WorkerCount(), 0u);  // Refused before the coordinator saw it.

  s = RegisterWorker(Options(kWorkerToken), "gpu-node");
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(WorkerCount(), 1u);
  // The worker token cannot submit; the submit token can, and both can read.
  EXPECT_EQ(Submit(Options(kWorkerToken)).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  s = Submit(Options(kSubmitToken));
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(ListJobs(Options(kSubmitToken)).ok());
  EXPECT_TRUE(ListJobs(Options(kWorkerToken)).ok());
}

TEST_F(AuthServiceTest, AnAdminTokenCanDoBoth) {
  Start({});
  grpc::Status s = RegisterWorker(Options(kAdminToken), "cpu");
  EXPECT_TRUE(s.ok()) << s.error_message();
  s = Submit(Options(kAdminToken));
  EXPECT_TRUE(s.ok()) << s.error_message();
  v1::ListJobsRequest req;
  v1::ListJobsResponse resp;
  const api::ChannelOptions o = Options(kAdminToken);
  ASSERT_TRUE(v1::Coordinator::NewStub(api::MakeChannel(o))->ListJobs(api::MakeContext(o).get(), req, &resp).ok());
  EXPECT_EQ(resp.jobs_size(), 1);
}

// Calls every rpc of the service descriptor as raw bytes (an empty request), so that an rpc added to
// coordinator.proto but not to GuardedCoordinatorService (UNIMPLEMENTED) or to the rules (PERMISSION_
// DENIED for admin) fails here, and none is reachable without a token.
// Muting a series (or any admin control of it) needs the admin role, and is recorded with the name of
// the token that did it.
TEST_F(AuthServiceTest, OnlyAnAdminTokenSetsSeriesControlsAndItsNameIsRecorded) {
  Start({});
  v1::SetSeriesControlRequest req;
  req.mutable_control()->set_kind(v1::SERIES_MUTE);
  req.mutable_control()->mutable_scope()->set_op("rmsnorm");
  auto set = [&](const char* token, v1::SetSeriesControlResponse* resp) {
    const api::ChannelOptions o = Options(token);
    return v1::Coordinator::NewStub(api::MakeChannel(o))->SetSeriesControl(api::MakeContext(o).get(), req, resp);
  };
  v1::SetSeriesControlResponse resp;
  grpc::Status denied = set(kSubmitToken, &resp);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED) << denied.error_message();
  EXPECT_NE(denied.error_message().find("admin role"), std::string::npos) << denied.error_message();
  EXPECT_TRUE(coordinator_->ListSeriesControls("")->empty());
  grpc::Status ok = set(kAdminToken, &resp);
  ASSERT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_EQ(resp.control().set_by(), "ops");
  EXPECT_EQ(resp.control().set_unix_ms(), clock_.NowUnixMs());
  auto listed = coordinator_->ListSeriesControls("rmsnorm");
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].set_by(), "ops");
}

TEST_F(AuthServiceTest, EveryRpcIsGuardedAndForwarded) {
  Start({});
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("kbench.v1.Coordinator");
  ASSERT_NE(service, nullptr);
  auto channel = api::MakeChannel(Options(""));
  grpc::GenericStub stub(channel);
  auto call = [&](const std::string& method, const std::string& token) {
    grpc::ClientContext context;
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::CompletionQueue cq;
    grpc::Slice empty("");
    grpc::ByteBuffer request(&empty, 1), response;
    grpc::Status status;
    std::unique_ptr<grpc::GenericClientAsyncResponseReader> rpc = stub.PrepareUnaryCall(&context, method, request, &cq);
    rpc->StartCall();
    rpc->Finish(&response, &status, reinterpret_cast<void*>(1));
    void* tag = nullptr;
    bool ok = false;
    EXPECT_TRUE(cq.Next(&tag, &ok));
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
    return status;
  };
  ASSERT_GE(service->method_count(), 13);
  for (int i = 0; i < service->method_count(); ++i) {
    const std::string method = "/kbench.v1.Coordinator/" + service->method(i)->name();
    grpc::Status anonymous = call(method, "");
    EXPECT_EQ(anonymous.error_code(), grpc::StatusCode::UNAUTHENTICATED) << method << ": " << anonymous.error_message();
    grpc::Status admin = call(method, kAdminToken);
    EXPECT_NE(admin.error_code(), grpc::StatusCode::UNIMPLEMENTED) << method << ": " << admin.error_message();
    EXPECT_NE(admin.error_code(), grpc::StatusCode::UNAUTHENTICATED) << method << ": " << admin.error_message();
    EXPECT_NE(admin.error_code(), grpc::StatusCode::PERMISSION_DENIED) << method << ": " << admin.error_message();
  }
}

TEST_F(AuthServiceTest, OverItsRateLimitATokenIsResourceExhausted) {
  Start({.rate_limit_per_second = 1, .rate_burst = 3});
  for (int i = 0; i < 3; ++i) {
    grpc::Status s = ListJobs(Options(kSubmitToken));
    EXPECT_TRUE(s.ok()) << i << ": " << s.error_message();
  }
  grpc::Status s = ListJobs(Options(kSubmitToken));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("token 'ci' is over its rate limit"), std::string::npos) << s.error_message();
  EXPECT_TRUE(ListJobs(Options(kAdminToken)).ok());  // Per token.
  now_ += std::chrono::seconds(1);
  EXPECT_TRUE(ListJobs(Options(kSubmitToken)).ok());
  EXPECT_EQ(ListJobs(Options(kSubmitToken)).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

class TlsServiceTest : public AuthServiceTest {
 protected:
  void SetUp() override { ASSERT_TRUE(certs_.ok()) << certs_.error(); }
  api::ChannelOptions Tls(const std::string& token, const std::string& ca = "ca.pem") const {
    api::ChannelOptions o = Options(token);
    o.tls_ca_path = certs_.Path(ca);
    return o;
  }
  tls_testing::TestCerts certs_;
};

TEST_F(TlsServiceTest, ATlsClientWithTheCaConnectsAndAPlaintextOneCannot) {
  with_tokens_ = false;
  Start({.tls_cert_path = certs_.Path("server.pem"), .tls_key_path = certs_.Path("server.key")});
  grpc::Status s = ListJobs(Tls(""));
  EXPECT_TRUE(s.ok()) << s.error_code() << ": " << s.error_message();
  s = ListJobs(Options(""));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  // A client that trusts another CA does not accept the server's certificate.
  s = ListJobs(Tls("", "other-ca.pem"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  // The name checked can be overridden (a certificate for localhost reached by address).
  api::ChannelOptions by_name = Tls("");
  by_name.tls_server_name = "localhost";
  s = ListJobs(by_name);
  EXPECT_TRUE(s.ok()) << s.error_message();
  by_name.tls_server_name = "kbench.example.com";  // Not in the certificate.
  EXPECT_EQ(ListJobs(by_name).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsServiceTest, TokensTravelOverTls) {
  Start({.tls_cert_path = certs_.Path("server.pem"), .tls_key_path = certs_.Path("server.key")});
  EXPECT_EQ(ListJobs(Tls("")).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(RegisterWorker(Tls(kSubmitToken), "x").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  grpc::Status s = RegisterWorker(Tls(kWorkerToken), "gpu-node");
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST_F(TlsServiceTest, ClientCertificatesAreRequiredWithAClientCa) {
  with_tokens_ = false;
  Start({.tls_cert_path = certs_.Path("server.pem"),
         .tls_key_path = certs_.Path("server.key"),
         .tls_client_ca_path = certs_.Path("ca.pem")});
  EXPECT_EQ(ListJobs(Tls("")).error_code(), grpc::StatusCode::UNAVAILABLE);  // No client certificate.
  api::ChannelOptions mtls = Tls("");
  mtls.tls_cert_path = certs_.Path("client.pem");
  mtls.tls_key_path = certs_.Path("client.key");
  grpc::Status s = ListJobs(mtls);
  EXPECT_TRUE(s.ok()) << s.error_message();
  // A certificate from another CA is refused.
  mtls.tls_cert_path = certs_.Path("other-ca.pem");
  mtls.tls_key_path = certs_.Path("other-ca.key");
  EXPECT_EQ(ListJobs(mtls).error_code(), grpc::StatusCode::UNAVAILABLE);
}

// A TLS file that cannot be read is an error up front, and the channel never falls back to plaintext.
TEST_F(TlsServiceTest, UnreadableTlsFilesNeverMeanPlaintext) {
  with_tokens_ = false;
  Start({});  // A plaintext server: a fallback would succeed.
  api::ChannelOptions o = Options("");
  o.tls_ca_path = certs_.Path("missing.pem");
  auto credentials = api::MakeChannelCredentials(o);
  ASSERT_FALSE(credentials.ok());
  EXPECT_NE(credentials.status().message().find("--tls-ca: cannot read '" + o.tls_ca_path + "'"),
            absl::string_view::npos)
      << credentials.status();
  // A lame channel: the call fails without ever connecting.
  EXPECT_EQ(ListJobs(o).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  o.tls_ca_path = certs_.Path("server.ext");  // Not PEM.
  credentials = api::MakeChannelCredentials(o);
  ASSERT_FALSE(credentials.ok());
  EXPECT_NE(credentials.status().message().find("is not a PEM file"), absl::string_view::npos);
  o.tls_ca_path = certs_.Path("ca.pem");
  o.tls_cert_path = certs_.Path("client.pem");  // Without its key.
  credentials = api::MakeChannelCredentials(o);
  ASSERT_FALSE(credentials.ok());
  EXPECT_NE(credentials.status().message().find("give both"), absl::string_view::npos);
  EXPECT_TRUE(ListJobs(Options("")).ok());  // The server is there.
}

}  // namespace
}  // namespace kbench::server

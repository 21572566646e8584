// The agent's connection to a coordinator that requires TLS with client certificates and a bearer
// token: every call the agent makes (register, heartbeat, lease, progress, complete) carries the
// token over an authenticated TLS channel.
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "../common/test_certs.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "test_ops.h"
#include "worker/agent/agent.h"
#include "worker/cpu/cpu_backend.h"

namespace kbench::worker {
namespace {

using namespace std::chrono_literals;

constexpr char kToken[] = "worker-token-0123456789";

// Records each call's method, authorization header and whether the TLS peer presented a verified
// certificate; refuses calls without the token, as the real coordinator does.
class RecordingCoordinator final : public v1::Coordinator::Service {
 public:
  struct Call {
    std::string method, authorization;
    bool peer_authenticated = false;
  };

  grpc::Status RegisterWorker(grpc::ServerContext* ctx, const v1::RegisterWorkerRequest*,
                              v1::RegisterWorkerResponse* resp) override {
    if (grpc::Status s = Record(ctx, "RegisterWorker"); !s.ok()) return s;
    resp->set_worker_id("w-1");
    resp->set_heartbeat_interval_ms(20);
    return grpc::Status::OK;
  }
  grpc::Status Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest*, v1::HeartbeatResponse*) override {
    return Record(ctx, "Heartbeat");
  }
  grpc::Status LeaseJob(grpc::ServerContext* ctx, const v1::LeaseJobRequest*, v1::LeaseJobResponse* resp) override {
    if (grpc::Status s = Record(ctx, "LeaseJob"); !s.ok()) return s;
    std::lock_guard<std::mutex> lock(mu);
    if (leased) return grpc::Status::OK;
    leased = true;
    v1::Job job;
    job.set_job_id("job-1");
    job.set_attempts(1);
    job.mutable_spec()->set_op("scale");
    job.mutable_spec()->add_variants("cpu_good");
    job.mutable_spec()->add_dtypes(v1::DTYPE_F32);
    *job.mutable_spec()->mutable_settings() = testing::TinySettings();
    resp->set_granted(true);
    *resp->mutable_job() = job;
    resp->set_lease_id("lease-1");
    resp->set_lease_expires_unix_ms(Later());
    return grpc::Status::OK;
  }
  grpc::Status ReportProgress(grpc::ServerContext* ctx, const v1::ReportProgressRequest*,
                              v1::ReportProgressResponse* resp) override {
    if (grpc::Status s = Record(ctx, "ReportProgress"); !s.ok()) return s;
    resp->set_lease_expires_unix_ms(Later());
    return grpc::Status::OK;
  }
  grpc::Status CompleteJob(grpc::ServerContext* ctx, const v1::CompleteJobRequest*, v1::CompleteJobResponse*) override {
    if (grpc::Status s = Record(ctx, "CompleteJob"); !s.ok()) return s;
    std::lock_guard<std::mutex> lock(mu);
    completed = true;
    cv.notify_all();
    return grpc::Status::OK;
  }

  static int64_t Later() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               (std::chrono::system_clock::now() + 30s).time_since_epoch())
        .count();
  }
  grpc::Status Record(grpc::ServerContext* ctx, const char* method) {
    Call call;
    call.method = method;
    const auto range = ctx->client_metadata().equal_range("authorization");
    if (range.first != range.second) call.authorization.assign(range.first->second.data(), range.first->second.size());
    call.peer_authenticated = ctx->auth_context() != nullptr && ctx->auth_context()->IsPeerAuthenticated();
    std::lock_guard<std::mutex> lock(mu);
    calls.push_back(call);
    cv.notify_all();
    if (call.authorization != std::string("Bearer ") + kToken)
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "invalid bearer token");
    return grpc::Status::OK;
  }
  bool HeartbeatSeen() const {
    for (const Call& c : calls)
      if (c.method == "Heartbeat") return true;
    return false;
  }

  std::mutex mu;
  std::condition_variable cv;
  bool leased = false, completed = false;
  std::vector<Call> calls;
};

TEST(AgentSecurity, EveryCallCarriesTheTokenOverMutualTls) {
  tls_testing::TestCerts certs;
  ASSERT_TRUE(certs.ok()) << certs.error();
  RecordingCoordinator fake;
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = certs.Read("ca.pem");
  ssl.pem_key_cert_pairs.push_back({certs.Read("server.key"), certs.Read("server.pem")});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(ssl), &port);
  builder.RegisterService(&fake);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);

  WorkerNode node(WorkerConfig{.name = "secure"},
                  std::make_unique<CpuBackend>(CpuBackendOptions{}, testing::TestHost()), testing::TestRegistry());
  AgentConfig config;
  config.coordinator = {.address = "127.0.0.1:" + std::to_string(port),
                        .token = kToken,
                        .tls_ca_path = certs.Path("ca.pem"),
                        .tls_cert_path = certs.Path("client.pem"),
                        .tls_key_path = certs.Path("client.key")};
  config.retry_initial = config.idle_initial = 10ms;
  config.retry_max = config.idle_max = 50ms;
  Agent agent(config, node);
  agent.Start();
  {
    std::unique_lock<std::mutex> lock(fake.mu);
    ASSERT_TRUE(fake.cv.wait_for(lock, 20s, [&] { return fake.completed && fake.HeartbeatSeen(); }));
  }
  agent.Stop();
  server->Shutdown(std::chrono::system_clock::now());

  std::lock_guard<std::mutex> lock(fake.mu);
  std::set<std::string> methods;
  for (const RecordingCoordinator::Call& c : fake.calls) {
    methods.insert(c.method);
    EXPECT_EQ(c.authorization, std::string("Bearer ") + kToken) << c.method;
    EXPECT_TRUE(c.peer_authenticated) << c.method;
  }
  EXPECT_EQ(methods,
            (std::set<std::string>{"RegisterWorker", "Heartbeat", "LeaseJob", "ReportProgress", "CompleteJob"}));
}

}  // namespace
}  // namespace kbench::worker

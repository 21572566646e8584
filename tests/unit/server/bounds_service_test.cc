// Bounded inputs through the real gRPC service on loopback (port 0), set up as kbench-coordinator
// sets it up: raw request bytes with a string that is not UTF-8 (sent through a generic stub, as no
// generated client would) answer INVALID_ARGUMENT naming the message and the field, not INTERNAL with
// an empty message; a 10 MB field answers a short message.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "api/channel.h"
#include "api/limits.h"
#include "api/parse_errors.h"
#include "fake_clock.h"
#include "fixtures.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kbench/v1/coordinator.grpc.pb.h"
#include "server/service/coordinator_service.h"
#include "server/store/sqlite_store.h"

namespace kbench::server {
namespace {

class BoundsServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = SqliteStore::Open(testing::TempDbPath());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    coordinator_ = std::make_unique<Coordinator>(CoordinatorConfig{}, store_.get(), &clock_);
    service_ = std::make_unique<CoordinatorService>(coordinator_.get());
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.SetMaxReceiveMessageSize(api::kMaxMessageBytes);
    builder.SetMaxSendMessageSize(api::kMaxMessageBytes);
    builder.RegisterService(service_.get());
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
    interceptors.push_back(api::MakeParseErrorInterceptorFactory());
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port, 0);
    options_.address = "127.0.0.1:" + std::to_string(port);
    channel_ = api::MakeChannel(options_);
    stub_ = v1::Coordinator::NewStub(channel_);
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  // Sends bytes as the request of method and returns the status.
  grpc::Status SendRaw(const std::string& method, const std::string& bytes) {
    grpc::GenericStub stub(channel_);
    grpc::CompletionQueue cq;
    grpc::ClientContext ctx;
    grpc::Slice slice(bytes);
    grpc::ByteBuffer request(&slice, 1);
    std::unique_ptr<grpc::GenericClientAsyncResponseReader> call = stub.PrepareUnaryCall(&ctx, method, request, &cq);
    call->StartCall();
    grpc::ByteBuffer response;
    grpc::Status status;
    call->Finish(&response, &status, reinterpret_cast<void*>(1));
    void* tag = nullptr;
    bool ok = false;
    EXPECT_TRUE(cq.Next(&tag, &ok));
    EXPECT_EQ(tag, reinterpret_cast<void*>(1));
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
    return status;
  }

  FakeClock clock_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<CoordinatorService> service_;
  std::unique_ptr<grpc::Server> server_;
  api::ChannelOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

// A length-delimited field: tag (field << 3 | 2), a one-byte length, the bytes.
std::string Field(int number, const std::string& bytes) {
  return std::string(1, static_cast<char>(number << 3 | 2)) + static_cast<char>(bytes.size()) + bytes;
}

TEST_F(BoundsServiceTest, InvalidUtf8InAStringIsInvalidArgumentNamingTheField) {
  // SubmitRequest{spec: JobSpec{op: "\xff\xfe"}}.
  const grpc::Status s = SendRaw("/kbench.v1.Coordinator/Submit", Field(1, Field(1, "\xff\xfe")));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_EQ(s.error_message(),
            "kbench.v1.SubmitRequest: string field kbench.v1.JobSpec.op is not valid UTF-8 (strings must be UTF-8; "
            "nothing was done)");
}

TEST_F(BoundsServiceTest, InvalidUtf8InALabelKeyNamesTheMapEntry) {
  // ReportProgressRequest{results: [Result{labels: {"\xc3\x28": "v"}}]}.
  const std::string entry = Field(1, "\xc3\x28") + Field(2, "v");
  const grpc::Status s = SendRaw("/kbench.v1.Coordinator/ReportProgress", Field(3, Field(15, entry)));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_TRUE(absl::StartsWith(s.error_message(), "kbench.v1.ReportProgressRequest: string field kbench.v1.Result."))
      << s.error_message();
}

TEST_F(BoundsServiceTest, BytesThatAreNoMessageAreInvalidArgumentNamingTheType) {
  const grpc::Status s = SendRaw("/kbench.v1.Coordinator/GetJob", std::string("\x0a\x7f\x01", 3));  // Truncated.
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_TRUE(absl::StartsWith(s.error_message(), "kbench.v1.GetJobRequest: the request does not parse"))
      << s.error_message();
}

TEST_F(BoundsServiceTest, ValidRequestsStillWork) {
  // The same path with valid UTF-8: the request reaches the coordinator (which has no worker yet).
  const grpc::Status s = SendRaw("/kbench.v1.Coordinator/Submit", Field(1, Field(1, "rmsnorm \xc3\xa9")));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
}

TEST_F(BoundsServiceTest, ATenMegabyteOpNameGetsAShortAnswer) {
  v1::SubmitRequest req;
  *req.mutable_spec() = testing::RmsnormSpec();
  req.mutable_spec()->set_op(std::string(10 << 20, 'o'));
  v1::SubmitResponse resp;
  const grpc::Status s = stub_->Submit(api::MakeContext(options_).get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(s.error_message(), "spec.op: 'oooo")) << s.error_message().substr(0, 200);
  EXPECT_LT(s.error_message().size(), 1024u);
}

TEST_F(BoundsServiceTest, ATenMegabyteLabelGetsAShortAnswerNamingIt) {
  v1::SubmitRequest req;
  *req.mutable_spec() = testing::RmsnormSpec();
  (*req.mutable_spec()->mutable_labels())["k"] = std::string(10 << 20, 'x');
  v1::SubmitResponse resp;
  const grpc::Status s = stub_->Submit(api::MakeContext(options_).get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(s.error_message(), "spec.labels[\"k\"]: value 'xxxx")) << s.error_message().substr(0, 200);
  EXPECT_LT(s.error_message().size(), 1024u);
}

TEST_F(BoundsServiceTest, AnyStatusMessageIsCutBeforeItLeaves) {
  const grpc::Status s = api::ToGrpc(absl::InvalidArgumentError(std::string(10 << 20, 'm')));
  EXPECT_LE(s.error_message().size(), api::kMaxStatusMessageBytes);
  EXPECT_TRUE(absl::EndsWith(s.error_message(), "(10485760 bytes in all)"));
}

}  // namespace
}  // namespace kbench::server

// The callback service's streams and its pool: plugins go up and come back whole over several
// chunks, refusals keep their codes, the closed gate refuses streams too, and hundreds of calls in
// flight at once complete on a pool of one thread (no thread per call).
#include <memory>
#include <string>
#include <vector>

#include "service_fixture.h"

namespace kbench::server {
namespace {

class StreamServiceTest : public testing::ServiceFixture {
 protected:
  // Uploads data in chunks of chunk_bytes (the first with expected_sha256).
  grpc::Status Upload(const std::string& data, size_t chunk_bytes, const std::string& expected_sha256,
                      v1::UploadPluginResponse* resp) {
    auto context = api::MakeContext(options_);
    std::unique_ptr<grpc::ClientWriter<v1::UploadPluginRequest>> writer = stub_->UploadPlugin(context.get(), resp);
    for (size_t at = 0; at < data.size(); at += chunk_bytes) {
      v1::UploadPluginRequest chunk;
      if (at == 0) {
        chunk.set_name("plugin.so");
        chunk.set_expected_sha256(expected_sha256);
      }
      chunk.set_data(data.substr(at, chunk_bytes));
      if (!writer->Write(chunk)) break;  // The server finished early: Finish says why.
    }
    writer->WritesDone();
    return writer->Finish();
  }

  // Reads a plugin back: its bytes, and the size its first chunk announced.
  grpc::Status Download(const std::string& sha256, std::string* data, int64_t* announced, int* chunks) {
    auto context = api::MakeContext(options_);
    v1::GetPluginRequest req;
    req.set_sha256(sha256);
    std::unique_ptr<grpc::ClientReader<v1::PluginChunk>> reader = stub_->GetPlugin(context.get(), req);
    v1::PluginChunk chunk;
    *chunks = 0;
    while (reader->Read(&chunk)) {
      if (*chunks == 0) *announced = chunk.size_bytes();
      data->append(chunk.data());
      ++*chunks;
    }
    return reader->Finish();
  }
};

std::string Bytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
  return s;
}

TEST_F(StreamServiceTest, APluginGoesUpAndComesBackWholeOverSeveralChunks) {
  Start(/*with_plugins=*/true);
  const std::string data = Bytes((5 << 20) / 2);  // 2.5 MiB: three chunks each way.
  v1::UploadPluginResponse up;
  grpc::Status s = Upload(data, 1 << 20, "", &up);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(up.size_bytes(), static_cast<int64_t>(data.size()));
  EXPECT_EQ(up.sha256().size(), 64u);
  EXPECT_FALSE(up.already_stored());

  v1::UploadPluginResponse again;
  s = Upload(data, 300000, up.sha256(), &again);  // Other chunking, same bytes, the right hash.
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(again.sha256(), up.sha256());
  EXPECT_TRUE(again.already_stored());

  v1::GetPluginInfoRequest info_req;
  info_req.set_sha256(up.sha256());
  v1::GetPluginInfoResponse info;
  s = stub_->GetPluginInfo(api::MakeContext(options_).get(), info_req, &info);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(info.size_bytes(), static_cast<int64_t>(data.size()));

  std::string back;
  int64_t announced = -1;
  int chunks = 0;
  s = Download(up.sha256(), &back, &announced, &chunks);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(chunks, 3);
  EXPECT_EQ(announced, static_cast<int64_t>(data.size()));
  EXPECT_TRUE(back == data) << back.size() << " bytes came back of " << data.size();
}

TEST_F(StreamServiceTest, RefusedUploadsAndDownloadsKeepTheirCodes) {
  Start(/*with_plugins=*/true);
  v1::UploadPluginResponse up;
  grpc::Status s = Upload(Bytes((1 << 20) + 1), (1 << 20) + 1, "", &up);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("data: at most 1048576 bytes per message"), std::string::npos) << s.error_message();
  s = Upload(Bytes(1000), 1000, "not-a-hash", &up);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("expected_sha256"), std::string::npos) << s.error_message();
  s = Upload(Bytes(1000), 1000, std::string(64, 'a'), &up);  // A hash, not these bytes'.
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();

  std::string back;
  int64_t announced = -1;
  int chunks = 0;
  s = Download(std::string(64, 'b'), &back, &announced, &chunks);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
  EXPECT_EQ(chunks, 0);
}

TEST_F(StreamServiceTest, WithoutAPluginStoreThePluginRpcsSaySo) {
  Start(/*with_plugins=*/false);
  v1::UploadPluginResponse up;
  grpc::Status s = Upload(Bytes(10), 10, "", &up);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("--plugin_dir"), std::string::npos) << s.error_message();
  std::string back;
  int64_t announced = -1;
  int chunks = 0;
  s = Download(std::string(64, 'b'), &back, &announced, &chunks);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  v1::GetPluginInfoRequest info_req;
  info_req.set_sha256(std::string(64, 'b'));
  v1::GetPluginInfoResponse info;
  s = stub_->GetPluginInfo(api::MakeContext(options_).get(), info_req, &info);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(StreamServiceTest, AClosedGateRefusesStreamsToo) {
  Start(/*with_plugins=*/true);
  ASSERT_TRUE(gate_.CloseAndDrain(absl::Seconds(60)));
  v1::UploadPluginResponse up;
  grpc::Status s = Upload(Bytes(10), 10, "", &up);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  std::string back;
  int64_t announced = -1;
  int chunks = 0;
  s = Download(std::string(64, 'b'), &back, &announced, &chunks);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(s.error_message().find("shutting down"), std::string::npos) << s.error_message();
}

// 300 calls sent before any answer is read, served by one handler thread: with a thread per call
// they would need 300; here every one completes with its own answer.
TEST_F(StreamServiceTest, HundredsOfCallsInFlightCompleteOnOneHandlerThread) {
  Start(/*with_plugins=*/false, /*handler_threads=*/1);
  EXPECT_EQ(service_->handler_threads(), 1);
  constexpr int kCalls = 300;
  grpc::CompletionQueue cq;
  struct Call {
    std::unique_ptr<grpc::ClientContext> context;
    v1::GetJobRequest req;
    v1::Job resp;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<v1::Job>> reader;
  };
  std::vector<Call> calls(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    Call& c = calls[i];
    c.context = api::MakeContext(options_);
    c.req.set_job_id("j-missing-" + std::to_string(i));
    c.reader = stub_->AsyncGetJob(c.context.get(), c.req, &cq);
    c.reader->Finish(&c.resp, &c.status, &c);
  }
  for (int i = 0; i < kCalls; ++i) {
    void* tag = nullptr;
    bool ok = false;
    ASSERT_TRUE(cq.Next(&tag, &ok));
    EXPECT_TRUE(ok);
  }
  for (int i = 0; i < kCalls; ++i) {
    EXPECT_EQ(calls[i].status.error_code(), grpc::StatusCode::NOT_FOUND) << i;
    EXPECT_NE(calls[i].status.error_message().find("j-missing-" + std::to_string(i)), std::string::npos)
        << calls[i].status.error_message();
  }
  cq.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) {
  }
}

}  // namespace
}  // namespace kbench::server

#include "api/channel.h"

namespace kbench::api {

std::shared_ptr<grpc::Channel> MakeChannel(const ChannelOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  return grpc::CreateCustomChannel(options.address, grpc::InsecureChannelCredentials(), args);
}

std::unique_ptr<grpc::ClientContext> MakeContext(const ChannelOptions& options, std::chrono::milliseconds timeout) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (!options.token.empty()) ctx->AddMetadata("authorization", "Bearer " + options.token);
  ctx->set_deadline(std::chrono::system_clock::now() + timeout);
  return ctx;
}

absl::Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

}  // namespace kbench::api

// Channels and call contexts shared by client and worker: address, bearer token, deadlines.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "grpcpp/grpcpp.h"

namespace kbench::api {

struct ChannelOptions {
  std::string address;  // host:port
  std::string token;    // Bearer token; empty: none.
};

std::shared_ptr<grpc::Channel> MakeChannel(const ChannelOptions& options);

// A context with the bearer token (if any) and a deadline.
std::unique_ptr<grpc::ClientContext> MakeContext(const ChannelOptions& options,
                                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

// gRPC status -> absl::Status, keeping code and message.
absl::Status FromGrpc(const grpc::Status& s);
// absl::Status -> gRPC status.
grpc::Status ToGrpc(const absl::Status& s);

// Message size limit for results with raw samples.
inline constexpr int kMaxMessageBytes = 64 << 20;

}  // namespace kbench::api

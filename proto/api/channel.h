// Channels and call contexts shared by client and worker: address, bearer token, TLS, deadlines.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"

namespace kbench::api {

struct ChannelOptions {
  std::string address;  // host:port
  std::string token;    // Bearer token; empty: none.
  // TLS, when tls_ca_path or tls_cert_path is set; plaintext otherwise. PEM files: the roots that
  // verify the server (empty: the system's), and the client's own certificate chain and key for a
  // server that requires client certificates (mTLS; both or neither).
  std::string tls_ca_path;
  std::string tls_cert_path;
  std::string tls_key_path;
  // The name the server's certificate is checked against instead of the address's host (tests).
  std::string tls_server_name;

  bool tls() const { return !tls_ca_path.empty() || !tls_cert_path.empty(); }
};

// The channel's credentials: TLS from the PEM files when options.tls(), else insecure. An error
// naming the file when one cannot be read or is not PEM, or when only one of cert and key is given.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const ChannelOptions& options);
// The channel arguments every kbench channel uses: message size limits, the TLS name override.
grpc::ChannelArguments MakeChannelArguments(const ChannelOptions& options);

// A channel with MakeChannelCredentials and MakeChannelArguments. When the credentials cannot be
// made, every call on the channel fails (INVALID_ARGUMENT), never falling back to plaintext: call
// MakeChannelCredentials first to report the reason.
std::shared_ptr<grpc::Channel> MakeChannel(const ChannelOptions& options);

// A context with the bearer token (if any) and a deadline.
std::unique_ptr<grpc::ClientContext> MakeContext(const ChannelOptions& options,
                                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

// gRPC status -> absl::Status, keeping code and message.
absl::Status FromGrpc(const grpc::Status& s);
// absl::Status -> gRPC status, the message cut to kMaxStatusMessageBytes (api/limits.h).
grpc::Status ToGrpc(const absl::Status& s);

// Message size limit for results with raw samples.
inline constexpr int kMaxMessageBytes = 64 << 20;

}  // namespace kbench::api

#include "api/channel.h"

#include "api/pem.h"
#include "api/quote.h"

namespace kbench::api {

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const ChannelOptions& options) {
  if (!options.tls()) {
    if (!options.tls_key_path.empty())
      return absl::InvalidArgumentError("--tls-key: given without --tls-cert");
    return grpc::InsecureChannelCredentials();
  }
  if (options.tls_cert_path.empty() != options.tls_key_path.empty())
    return absl::InvalidArgumentError(
        "--tls-cert and --tls-key: give both (a client certificate and its key) or neither");
  grpc::SslCredentialsOptions ssl;
  if (!options.tls_ca_path.empty()) {
    absl::StatusOr<std::string> ca = ReadPemFile(options.tls_ca_path, "--tls-ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *std::move(ca);
  }
  if (!options.tls_cert_path.empty()) {
    absl::StatusOr<std::string> cert = ReadPemFile(options.tls_cert_path, "--tls-cert");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadPemFile(options.tls_key_path, "--tls-key");
    if (!key.ok()) return key.status();
    ssl.pem_cert_chain = *std::move(cert);
    ssl.pem_private_key = *std::move(key);
  }
  return grpc::SslCredentials(ssl);
}

grpc::ChannelArguments MakeChannelArguments(const ChannelOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  if (options.tls() && !options.tls_server_name.empty()) args.SetSslTargetNameOverride(options.tls_server_name);
  return args;
}

std::shared_ptr<grpc::Channel> MakeChannel(const ChannelOptions& options) {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = MakeChannelCredentials(options);
  // Null credentials make a channel whose calls all fail: never plaintext when TLS was asked for.
  return grpc::CreateCustomChannel(options.address, credentials.ok() ? *credentials : nullptr,
                                   MakeChannelArguments(options));
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
  // A status message travels in a header: past ~16 KB the peer sees only a metadata-size error.
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), CutText(s.message(), kMaxStatusMessageBytes));
}

}  // namespace kbench::api

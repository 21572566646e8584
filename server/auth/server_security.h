// The coordinator's security settings put together: TLS credentials (--tls-cert, --tls-key, and
// --tls-client-ca for client certificates), bearer tokens with roles (--token-file), per-token rate
// limits (--rate-limit-per-second, --rate-burst), and the rule that a server listening beyond
// loopback needs tokens unless told --insecure. Without any of the flags: plaintext, no tokens, as
// before. The worker's own Worker service (a job sent straight to one worker) is served under the
// same rules, with its flags named --listen-tls-cert, ... (SecurityOptions::flag_prefix).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/security/server_credentials.h"
#include "kbench/v1/coordinator.grpc.pb.h"
#include "server/auth/authorizer.h"
#include "server/auth/guarded_service.h"
#include "server/auth/rate_limiter.h"
#include "server/auth/token_store.h"

namespace kbench::server::auth {

struct SecurityOptions {
  std::string tls_cert_path;       // PEM certificate chain of the server.
  std::string tls_key_path;        // Its PEM private key.
  std::string tls_client_ca_path;  // PEM roots: when set, clients must present a certificate they signed.
  std::string token_file;          // Empty: no tokens, every call allowed.
  bool insecure = false;           // Allows listening beyond loopback without tokens.
  double rate_limit_per_second = 0;  // Per token; 0: no limit.
  double rate_burst = 0;             // Bucket size; 0: one second's worth (at least 1).
  // Put after the "--" of every flag the messages name: "" for the coordinator, "listen-" for the
  // worker (--listen-tls-cert, --listen-token-file, ...).
  std::string flag_prefix;
};

// True when the gRPC listen address (host:port) only accepts local connections: a host in
// 127.0.0.0/8, ::1 (also "[::1]" and ::ffff:127.x.y.z), "localhost", or a unix: socket. Anything
// else (0.0.0.0, [::], an empty host, a name or another address) is beyond loopback.
bool IsLoopbackListenAddress(absl::string_view listen);

class ServerSecurity {
 public:
  // Checks the flag combinations and the loopback rule, reads the PEM files and the token file.
  // INVALID_ARGUMENT naming the flag (or FILE:LINE) on any problem: the server should exit 2.
  // `now` is the rate limiter's clock (default: steady_clock).
  static absl::StatusOr<std::unique_ptr<ServerSecurity>> Make(const SecurityOptions& options,
                                                              absl::string_view listen,
                                                              RateLimiter::Now now = nullptr);

  // For AddListeningPort: TLS when a certificate was given, else insecure.
  std::shared_ptr<grpc::ServerCredentials> credentials() const { return credentials_; }
  // The service to register: `inner` itself without tokens, else a guard around it, owned by this
  // (inner must outlive this object).
  grpc::Service* Guard(v1::Coordinator::CallbackService* inner);
  // The same for a worker's Worker service (GuardedWorkerService).
  grpc::Service* Guard(v1::Worker::Service* inner);
  // One line for the log: "TLS (client certificates required); 3 tokens from FILE; rate limit ...".
  std::string Describe() const;
  // A warning for the log when serving beyond loopback without tokens (--insecure); else empty.
  const std::string& warning() const { return warning_; }

  bool tokens_enabled() const { return tokens_ != nullptr; }
  // The name of the token a call carries (recorded with admin changes); "" without tokens.
  std::string CallerName(const grpc::ServerContextBase& context) const;

 private:
  ServerSecurity() = default;

  SecurityOptions options_;
  std::shared_ptr<grpc::ServerCredentials> credentials_;
  std::unique_ptr<TokenStore> tokens_;
  std::unique_ptr<RateLimiter> limiter_;
  std::unique_ptr<Authorizer> authorizer_;
  std::unique_ptr<GuardedCoordinatorService> guard_;
  std::unique_ptr<GuardedWorkerService> worker_guard_;
  std::string warning_;
};

}  // namespace kbench::server::auth

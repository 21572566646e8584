// Server credentials, tokens, rate limits and the loopback rule; see server_security.h.
#include "server/auth/server_security.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "api/pem.h"

namespace kbench::server::auth {
namespace {

// The host of "host:port" / "[v6]:port", without brackets.
absl::string_view HostOf(absl::string_view listen) {
  const size_t colon = listen.rfind(':');
  absl::string_view host = colon == absl::string_view::npos ? listen : listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return host;
}

bool IsLoopbackHost(absl::string_view host) {
  if (absl::EqualsIgnoreCase(host, "localhost")) return true;
  const std::string h(host);
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

absl::Status Invalid(absl::string_view message) { return absl::InvalidArgumentError(message); }

// "--" + the prefix + name: how the message names a flag of this server.
std::string Flag(const SecurityOptions& options, absl::string_view name) {
  return absl::StrCat("--", options.flag_prefix, name);
}

}  // namespace

bool IsLoopbackListenAddress(absl::string_view listen) {
  if (absl::StartsWith(listen, "unix:") || absl::StartsWith(listen, "unix-abstract:")) return true;
  return IsLoopbackHost(HostOf(listen));
}

absl::StatusOr<std::unique_ptr<ServerSecurity>> ServerSecurity::Make(const SecurityOptions& options,
                                                                     absl::string_view listen, RateLimiter::Now now) {
  std::unique_ptr<ServerSecurity> s(new ServerSecurity());
  s->options_ = options;
  const bool loopback = IsLoopbackListenAddress(listen);
  const std::string token_file = Flag(options, "token-file"), insecure = Flag(options, "insecure");
  const std::string tls_cert = Flag(options, "tls-cert"), tls_key = Flag(options, "tls-key");
  const std::string tls_client_ca = Flag(options, "tls-client-ca");
  if (!loopback && options.token_file.empty() && !options.insecure)
    return Invalid(absl::StrCat("--listen ", listen, " accepts connections beyond loopback, and without ", token_file,
                                " anyone who can reach it may ",
                                options.flag_prefix.empty() ? "submit jobs and act as a worker"
                                                            : "run jobs on this worker's devices",
                                ": give ", token_file, " (bearer tokens with roles), or ", insecure,
                                " to serve without authentication anyway"));
  if (!loopback && options.token_file.empty())
    s->warning_ = absl::StrCat("WARNING: ", insecure, ": serving ", listen, " beyond loopback without authentication");

  // TLS.
  if (options.tls_cert_path.empty() != options.tls_key_path.empty())
    return Invalid(absl::StrCat(tls_cert, " and ", tls_key,
                                ": give both (the server's certificate chain and its key) or neither"));
  if (!options.tls_client_ca_path.empty() && options.tls_cert_path.empty())
    return Invalid(absl::StrCat(tls_client_ca, " needs ", tls_cert, " and ", tls_key,
                                " (client certificates are checked over TLS)"));
  if (options.tls_cert_path.empty()) {
    s->credentials_ = grpc::InsecureServerCredentials();
  } else {
    absl::StatusOr<std::string> cert = api::ReadPemFile(options.tls_cert_path, tls_cert);
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = api::ReadPemFile(options.tls_key_path, tls_key);
    if (!key.ok()) return key.status();
    grpc::SslServerCredentialsOptions ssl(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    if (!options.tls_client_ca_path.empty()) {
      absl::StatusOr<std::string> ca = api::ReadPemFile(options.tls_client_ca_path, tls_client_ca);
      if (!ca.ok()) return ca.status();
      ssl.pem_root_certs = *std::move(ca);
      ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    ssl.pem_key_cert_pairs.push_back({*std::move(key), *std::move(cert)});
    s->credentials_ = grpc::SslServerCredentials(ssl);
  }

  // Rate limits.
  if (!(options.rate_limit_per_second >= 0) || std::isinf(options.rate_limit_per_second))
    return Invalid("--rate-limit-per-second: must be >= 0 (0: no limit)");
  if (!(options.rate_burst >= 0) || std::isinf(options.rate_burst))
    return Invalid("--rate-burst: must be >= 0 (0: one second's worth)");
  if (options.rate_burst > 0 && options.rate_limit_per_second == 0)
    return Invalid("--rate-burst needs --rate-limit-per-second");
  if (options.rate_limit_per_second > 0 && options.token_file.empty())
    return Invalid(absl::StrCat("--rate-limit-per-second needs ", token_file, ": the limits are per token"));

  // Tokens.
  if (!options.token_file.empty()) {
    absl::StatusOr<TokenStore> tokens = TokenStore::Load(options.token_file);
    if (!tokens.ok() && !options.flag_prefix.empty())  // The loader names the coordinator's flag.
      return absl::Status(tokens.status().code(),
                          absl::StrReplaceAll(tokens.status().message(), {{"--token-file", token_file}}));
    if (!tokens.ok()) return tokens.status();
    s->tokens_ = std::make_unique<TokenStore>(*std::move(tokens));
    if (options.rate_limit_per_second > 0) {
      const double burst =
          options.rate_burst > 0 ? options.rate_burst : std::max(1.0, std::ceil(options.rate_limit_per_second));
      s->options_.rate_burst = burst;
      s->limiter_ = std::make_unique<RateLimiter>(s->tokens_->size(), options.rate_limit_per_second, burst,
                                                  std::move(now));
    }
    s->authorizer_ = std::make_unique<Authorizer>(s->tokens_.get(), s->limiter_.get());
  }
  return s;
}

grpc::Service* ServerSecurity::Guard(v1::Coordinator::CallbackService* inner) {
  if (authorizer_ == nullptr) return inner;
  guard_ = std::make_unique<GuardedCoordinatorService>(inner, authorizer_.get());
  return guard_.get();
}

grpc::Service* ServerSecurity::Guard(v1::Worker::Service* inner) {
  if (authorizer_ == nullptr) return inner;
  worker_guard_ = std::make_unique<GuardedWorkerService>(inner, authorizer_.get());
  return worker_guard_.get();
}

std::string ServerSecurity::CallerName(const grpc::ServerContextBase& context) const {
  return authorizer_ == nullptr ? "" : auth::CallerName(*authorizer_, context);
}

std::string ServerSecurity::Describe() const {
  std::string out;
  if (options_.tls_cert_path.empty())
    out = "plaintext (no TLS)";
  else if (options_.tls_client_ca_path.empty())
    out = "TLS";
  else
    out = "TLS, client certificates required";
  if (tokens_ == nullptr) {
    absl::StrAppend(&out, "; no authentication (no ", Flag(options_, "token-file"), ")");
  } else {
    absl::StrAppend(&out, "; ", tokens_->size(), " bearer token", tokens_->size() == 1 ? "" : "s", " from ",
                    options_.token_file);
    if (limiter_ != nullptr)
      absl::StrAppend(&out, absl::StrFormat("; rate limit %g requests/s per token, burst %g",
                                            limiter_->rate_per_second(), limiter_->burst()));
  }
  return out;
}

}  // namespace kbench::server::auth

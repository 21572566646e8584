#include "server/auth/security_flags.h"

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain of the server: serve TLS (with --tls-key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA certificates: require every client (e.g. workers) to present a certificate they signed (mTLS)");
ABSL_FLAG(std::string, token_file, "",
          "Bearer tokens with roles, one a line: 'TOKEN ROLE[,ROLE] [NAME]' (roles submit, worker, admin; "
          "# comments); every rpc then needs a token with its role. Empty: no authentication");
ABSL_FLAG(bool, insecure, false,
          "Serve a --listen address beyond loopback without --token-file (refused otherwise)");
ABSL_FLAG(double, rate_limit_per_second, 0,
          "Requests per second each token may make (a token bucket; over it: RESOURCE_EXHAUSTED); 0: no limit");
ABSL_FLAG(double, rate_burst, 0,
          "Bucket size: requests a token may make at once before --rate-limit-per-second paces it; "
          "0: one second's worth");

namespace kbench::server::auth {

const std::vector<std::string>& SecurityFlagNames() {
  static const auto* names = new std::vector<std::string>{
      "tls_cert", "tls_key", "tls_client_ca", "token_file", "insecure", "rate_limit_per_second", "rate_burst"};
  return *names;
}

std::vector<std::string> WithSecurityFlags(const std::vector<std::string>& names) {
  std::vector<std::string> out = names;
  out.insert(out.end(), SecurityFlagNames().begin(), SecurityFlagNames().end());
  return out;
}

SecurityOptions SecurityOptionsFromFlags() {
  SecurityOptions o;
  o.tls_cert_path = absl::GetFlag(FLAGS_tls_cert);
  o.tls_key_path = absl::GetFlag(FLAGS_tls_key);
  o.tls_client_ca_path = absl::GetFlag(FLAGS_tls_client_ca);
  o.token_file = absl::GetFlag(FLAGS_token_file);
  o.insecure = absl::GetFlag(FLAGS_insecure);
  o.rate_limit_per_second = absl::GetFlag(FLAGS_rate_limit_per_second);
  o.rate_burst = absl::GetFlag(FLAGS_rate_burst);
  return o;
}

}  // namespace kbench::server::auth

// ServerSecurity: the loopback rule, flag combinations, and what it builds from them.
#include "server/auth/server_security.h"

#include <fstream>

#include "gtest/gtest.h"

namespace kbench::server::auth {
namespace {

std::string WriteTokens(const std::string& text) {
  static int n = 0;
  const std::string path = ::testing::TempDir() + "/kbench-security-test-tokens-" + std::to_string(++n);
  std::ofstream(path) << text;
  return path;
}

TEST(ServerSecurity, LoopbackAddresses) {
  for (const char* a : {"127.0.0.1:50051", "127.0.0.1:0", "127.1.2.3:1", "localhost:50051", "LOCALHOST:1",
                        "[::1]:50051", "::1:50051", "[::ffff:127.0.0.1]:1", "unix:/run/kbench.sock",
                        "unix-abstract:kbench"})
    EXPECT_TRUE(IsLoopbackListenAddress(a)) << a;
  for (const char* a : {"0.0.0.0:50051", "[::]:50051", ":50051", "10.0.0.5:50051", "128.0.0.1:1",
                        "kbench.example.com:50051", "[::ffff:10.0.0.1]:1", "[fe80::1]:1", "localhost.evil.com:1",
                        "vsock:3:50051"})
    EXPECT_FALSE(IsLoopbackListenAddress(a)) << a;
}

TEST(ServerSecurity, BeyondLoopbackNeedsTokensOrInsecure) {
  absl::StatusOr<std::unique_ptr<ServerSecurity>> s = ServerSecurity::Make({}, "0.0.0.0:50051");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("--token-file"), absl::string_view::npos) << s.status();
  EXPECT_NE(s.status().message().find("--insecure"), absl::string_view::npos) << s.status();

  s = ServerSecurity::Make({.insecure = true}, "0.0.0.0:50051");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_NE((*s)->warning().find("without authentication"), std::string::npos);
  EXPECT_FALSE((*s)->tokens_enabled());

  s = ServerSecurity::Make({.token_file = WriteTokens("admin-0123456789abcdef admin\n")}, "0.0.0.0:50051");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->warning(), "");
  EXPECT_TRUE((*s)->tokens_enabled());

  s = ServerSecurity::Make({}, "127.0.0.1:0");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->warning(), "");
  EXPECT_EQ((*s)->Describe(), "plaintext (no TLS); no authentication (no --token-file)");
}

TEST(ServerSecurity, BadCombinationsNameTheirFlags) {
  const std::string tokens = WriteTokens("admin-0123456789abcdef admin\n");
  struct Case {
    SecurityOptions options;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{.tls_cert_path = "/nonexistent/cert.pem"}, "--tls-cert and --tls-key: give both"},
           {{.tls_key_path = "/nonexistent/key.pem"}, "--tls-cert and --tls-key: give both"},
           {{.tls_client_ca_path = "/nonexistent/ca.pem"}, "--tls-client-ca needs --tls-cert"},
           {{.tls_cert_path = "/nonexistent/cert.pem", .tls_key_path = "/nonexistent/key.pem"},
            "--tls-cert: cannot read '/nonexistent/cert.pem'"},
           {{.token_file = "/nonexistent/tokens"}, "--token-file: cannot read '/nonexistent/tokens'"},
           {{.token_file = WriteTokens("oops\n")}, ":1: expected 'TOKEN ROLE[,ROLE] [NAME]'"},
           {{.rate_limit_per_second = 5}, "--rate-limit-per-second needs --token-file"},
           {{.token_file = tokens, .rate_burst = 5}, "--rate-burst needs --rate-limit-per-second"},
           {{.token_file = tokens, .rate_limit_per_second = -1}, "--rate-limit-per-second: must be >= 0"},
           {{.token_file = tokens, .rate_limit_per_second = 1, .rate_burst = -1}, "--rate-burst: must be >= 0"},
       }) {
    absl::StatusOr<std::unique_ptr<ServerSecurity>> s = ServerSecurity::Make(c.options, "127.0.0.1:0");
    ASSERT_FALSE(s.ok()) << c.message;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find(c.message), absl::string_view::npos)
        << s.status().message() << "\nexpected: " << c.message;
  }
}

TEST(ServerSecurity, GuardWrapsTheServiceOnlyWithTokens) {
  v1::Coordinator::CallbackService inner;
  absl::StatusOr<std::unique_ptr<ServerSecurity>> plain = ServerSecurity::Make({}, "127.0.0.1:0");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ((*plain)->Guard(&inner), &inner);

  const std::string tokens = WriteTokens("admin-0123456789abcdef admin\nsubmit-0123456789abcdef submit\n");
  absl::StatusOr<std::unique_ptr<ServerSecurity>> guarded =
      ServerSecurity::Make({.token_file = tokens, .rate_limit_per_second = 2.5}, "127.0.0.1:0");
  ASSERT_TRUE(guarded.ok()) << guarded.status();
  grpc::Service* service = (*guarded)->Guard(&inner);
  EXPECT_NE(service, &inner);
  EXPECT_NE(dynamic_cast<GuardedCoordinatorService*>(service), nullptr);
  // Burst defaults to one second's worth, rounded up.
  EXPECT_EQ((*guarded)->Describe(), "plaintext (no TLS); 2 bearer tokens from " + tokens +
                                        "; rate limit 2.5 requests/s per token, burst 3");
}

}  // namespace
}  // namespace kbench::server::auth

// kbench-client's TLS settings: --tls-ca / --tls-cert / --tls-key, else $KBENCH_TLS_CA,
// $KBENCH_TLS_CERT, $KBENCH_TLS_KEY, else the config file's tls_ca, tls_cert, tls_key; and a real
// TLS coordinator reached with them (certificates made by the openssl CLI at test time).
#include <stdlib.h>

#include <fstream>
#include <sstream>

#include "../common/test_certs.h"
#include "client/commands.h"
#include "client/connection.h"
#include "fake_coordinator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench::client {
namespace {

using ::testing::HasSubstr;

constexpr const char* kVars[] = {"KBENCH_COORDINATOR", "KBENCH_TOKEN",    "KBENCH_CONFIG",  "HOME",
                                 "KBENCH_TLS_CA",      "KBENCH_TLS_CERT", "KBENCH_TLS_KEY"};

class ConnectionTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) {
      if (const char* old = getenv(v)) saved_.emplace_back(v, old);
      unsetenv(v);
    }
    config_ = ::testing::TempDir() + "/kbench-connection-tls-test.conf";
  }
  void TearDown() override {
    for (const char* v : kVars) unsetenv(v);
    for (const auto& [k, v] : saved_) setenv(k.c_str(), v.c_str(), 1);
  }

  std::string config_;
  std::vector<std::pair<std::string, std::string>> saved_;
};

TEST_F(ConnectionTlsTest, PlaintextUnlessAskedFor) {
  auto c = ResolveConnection({});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->tls());
}

TEST_F(ConnectionTlsTest, FlagThenEnvironmentThenConfigFile) {
  std::ofstream(config_) << "tls_ca = /file/ca.pem\ntls_cert = /file/cert.pem\ntls_key = /file/key.pem\n";
  ConnectionFlags flags;
  flags.config = config_;
  auto c = ResolveConnection(flags);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->tls());
  EXPECT_EQ(c->tls_ca_path, "/file/ca.pem");
  EXPECT_EQ(c->tls_cert_path, "/file/cert.pem");
  EXPECT_EQ(c->tls_key_path, "/file/key.pem");

  setenv("KBENCH_TLS_CA", "/env/ca.pem", 1);
  setenv("KBENCH_TLS_KEY", "/env/key.pem", 1);
  c = ResolveConnection(flags);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->tls_ca_path, "/env/ca.pem");
  EXPECT_EQ(c->tls_cert_path, "/file/cert.pem");
  EXPECT_EQ(c->tls_key_path, "/env/key.pem");

  flags.tls_ca = "/flag/ca.pem";
  flags.tls_cert = "/flag/cert.pem";
  c = ResolveConnection(flags);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->tls_ca_path, "/flag/ca.pem");
  EXPECT_EQ(c->tls_cert_path, "/flag/cert.pem");
  EXPECT_EQ(c->tls_key_path, "/env/key.pem");
}

TEST_F(ConnectionTlsTest, UnknownConfigKeysNameTheTlsOnes) {
  auto parsed = ParseConfig("tls-ca = x\n", "client.conf");
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("client.conf:1: unknown key 'tls-ca'"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("tls_ca, tls_cert, tls_key"));
}

struct Outcome {
  int rc;
  std::string out, err;
};

Outcome RunCliWith(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  Io io{out, err};
  const int rc = RunCli(args, io);
  return {rc, out.str(), err.str()};
}

TEST_F(ConnectionTlsTest, ReachesATlsCoordinatorWithItsCa) {
  tls_testing::TestCerts certs;
  ASSERT_TRUE(certs.ok()) << certs.error();
  testing::FakeCoordinator fake;
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({certs.Read("server.key"), certs.Read("server.pem")});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(ssl), &port);
  builder.RegisterService(&fake);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);

  // The CA as a global flag, with a token: both reach the coordinator.
  Outcome r = RunCliWith({"--coordinator", address, "--tls-ca", certs.Path("ca.pem"), "--token", "t0k", "workers"});
  EXPECT_EQ(r.rc, 0) << r.err;
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    ASSERT_FALSE(fake.tokens.empty());
    EXPECT_EQ(fake.tokens.back(), "Bearer t0k");
  }
  // As a subcommand flag, and from the environment.
  r = RunCliWith({"workers", "--coordinator", address, "--tls-ca", certs.Path("ca.pem")});
  EXPECT_EQ(r.rc, 0) << r.err;
  setenv("KBENCH_TLS_CA", certs.Path("ca.pem").c_str(), 1);
  r = RunCliWith({"--coordinator", address, "workers"});
  EXPECT_EQ(r.rc, 0) << r.err;
  unsetenv("KBENCH_TLS_CA");

  // Plaintext to a TLS server fails; so does an unreadable CA file, before any call.
  r = RunCliWith({"--coordinator", address, "workers"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("UNAVAILABLE"));
  r = RunCliWith({"--coordinator", address, "--tls-ca", certs.Path("missing.pem"), "workers"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--tls-ca: cannot read '" + certs.Path("missing.pem") + "'"));
  server->Shutdown(std::chrono::system_clock::now());
}

TEST_F(ConnectionTlsTest, HelpListsTheTlsFlags) {
  Outcome r = RunCliWith({"--help"});
  EXPECT_EQ(r.rc, 0);
  for (const char* flag : {"--tls-ca", "--tls-cert", "--tls-key"}) EXPECT_THAT(r.out, HasSubstr(flag));
}

}  // namespace
}  // namespace kbench::client

// Throwaway TLS material for tests, made with the openssl CLI in a fresh temporary directory (never
// committed): a CA, a server certificate for 127.0.0.1 and localhost, and a client certificate, all
// signed by the CA; plus a second, unrelated CA. Header-only, shared by the server, worker and client
// tests.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace kbench::tls_testing {

class TestCerts {
 public:
  // Generates everything; ok() tells whether it worked, error() why not.
  TestCerts() {
    std::string base = "/tmp";
    if (const char* t = std::getenv("TMPDIR"); t != nullptr && *t != '\0') base = t;
    std::string templ = base + "/kbench-certs-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) {
      error_ = "mkdtemp failed under " + base;
      return;
    }
    dir_ = templ;
    // EC keys: fast to make. The CA gets v3_ca (CA:TRUE) from `req -x509`; the leaves get their
    // SANs and key usages from extension files.
    Write("server.ext",
          "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n");
    Write("client.ext", "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n");
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    ok_ = Run("openssl req -x509" + ec + " -keyout ca.key -out ca.pem -days 2 -subj '/CN=kbench test CA'") &&
          Run("openssl req -x509" + ec + " -keyout other-ca.key -out other-ca.pem -days 2 -subj '/CN=other CA'") &&
          Run("openssl req" + ec + " -keyout server.key -out server.csr -subj '/CN=kbench test server'") &&
          Run("openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
              "-extfile server.ext -out server.pem") &&
          Run("openssl req" + ec + " -keyout client.key -out client.csr -subj '/CN=kbench test worker'") &&
          Run("openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
              "-extfile client.ext -out client.pem");
  }
  ~TestCerts() {
    if (!dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }
  TestCerts(const TestCerts&) = delete;
  TestCerts& operator=(const TestCerts&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  const std::string& dir() const { return dir_; }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string Read(const std::string& name) const {
    std::ifstream in(Path(name));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  void Write(const std::string& name, const std::string& text) { std::ofstream(Path(name)) << text; }
  bool Run(const std::string& command) {
    const std::string full = "cd '" + dir_ + "' && " + command + " >>openssl.log 2>&1";
    if (std::system(full.c_str()) == 0) return true;
    error_ = "failed: " + command + "\n" + Read("openssl.log");
    return false;
  }

  std::string dir_;
  bool ok_ = false;
  std::string error_;
};

}  // namespace kbench::tls_testing

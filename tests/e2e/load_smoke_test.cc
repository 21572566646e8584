// kbench-load, briefly and small (50 workers, 10 clients, 5 s), on SQLite and on PostgreSQL: every
// job must finish exactly once with all its results and every call must succeed. Correctness only:
// the latencies it prints are never judged here (server/README.md holds the measured figures).
#include <regex>
#include <string>

#include "gtest/gtest.h"
#include "postgres_fixture.h"
#include "process.h"

namespace kbench::e2e {
namespace {

// Runs kbench-load with the small settings and extra flags; checks its verdict and its job count.
void RunSmoke(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {KBENCH_LOAD_BIN, "--workers=50", "--clients=10", "--duration-s=5",
                                   "--coordinator-bin=" KBENCH_COORDINATOR_BIN, "--result-ms=20", "--poll-ms=50"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const CommandResult r = RunCommand(argv, std::chrono::seconds(600));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("CORRECT: no job lost or duplicated, every call OK"), std::string::npos) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m,
                                std::regex(R"(jobs: (\d+) submitted, (\d+) succeeded with every result once, 0 lost, 0 duplicated)")))
      << r.out;
  EXPECT_GT(std::stoi(m[1]), 0) << r.out;
  EXPECT_EQ(m[1], m[2]) << r.out;
  // The clients' first submissions are spread (1 s by default) and the report says so.
  EXPECT_NE(r.out.find("10 clients (first submissions spread over 1000 ms)"), std::string::npos) << r.out;
  // The coordinator's usage is read from /proc when kbench-load started it.
  EXPECT_NE(r.out.find("coordinator: RSS"), std::string::npos) << r.out;
}

TEST(LoadSmoke, SqliteLosesAndDuplicatesNoJob) { RunSmoke({}); }

TEST(LoadSmoke, PostgresLosesAndDuplicatesNoJob) {
  absl::StatusOr<server::testing::PostgresServer*> pg = server::testing::SharedPostgres();
  ASSERT_TRUE(pg.ok()) << pg.status();
  absl::StatusOr<std::string> uri = (*pg)->CreateDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status();
  RunSmoke({"--db=" + *uri, "--coordinator-args=--db-pool-size=8"});
}

TEST(LoadSmoke, HelpAnswersAndBadFlagsAreRefused) {
  const CommandResult help = RunCommand({KBENCH_LOAD_BIN, "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("--workers"), std::string::npos) << help.out;
  const CommandResult bad = RunCommand({KBENCH_LOAD_BIN, "--workers=0"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--workers"), std::string::npos) << bad.err;
  const CommandResult spread = RunCommand({KBENCH_LOAD_BIN, "--duration-s=5", "--client-start-spread-ms=6000"});
  EXPECT_EQ(spread.exit_code, 2);
  EXPECT_NE(spread.err.find("--client-start-spread-ms"), std::string::npos) << spread.err;
  const CommandResult remote = RunCommand({KBENCH_LOAD_BIN, "--coordinator=10.1.2.3:50051"});
  EXPECT_EQ(remote.exit_code, 2);
  EXPECT_NE(remote.err.find("loopback"), std::string::npos) << remote.err;
}

}  // namespace
}  // namespace kbench::e2e

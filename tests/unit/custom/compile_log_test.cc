// The compile log that goes back to a job (worker/custom/compile_log.h): the messages about the
// user's own file and the contract's checks are kept with their quoted line and caret; a message
// about another file, with the lines that quote it, is left out; the result is capped at 16 KiB.
#include "worker/custom/compile_log.h"

#include <string>

#include "gtest/gtest.h"

namespace kbench::worker {
namespace {

constexpr char kLog[] =
    "mine.cu(3): error: expected a \";\"\n"
    "    if (i < N) out[i] = x[i] + y[i];\n"
    "    ^\n"
    "\n"
    "/etc/passwd(1): error: this declaration has no storage class or type specifier\n"
    "  root:x:0:0:root:/root:/bin/bash\n"
    "  ^\n"
    "\n"
    "mine.cu(7): warning #177-D: variable \"t\" was declared but never referenced\n"
    "    int t;\n"
    "        ^\n"
    "\n"
    "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n"
    "\n"
    "kbench_contract_check(19): error: static assertion failed with \"kbench contract: parameter 4 (N)\"\n"
    "  static_assert(fn<F>::arity != 4 || i64<typename param<3, F>::type>::is, \"...\");\n"
    "  ^\n"
    "\n"
    "KBENCH_TOKEN=s3cr3t-xyz\n"
    "/proc/self/environ(1): error: unrecognized token\n"
    "  KBENCH_TOKEN=s3cr3t-xyz\n"
    "\n"
    "3 errors detected in the compilation of \"mine.cu\".\n";

TEST(CompileLog, KeepsTheUsersMessagesAndDropsOtherFiles) {
  const std::string out = FilterCompileLog(kLog, "mine.cu");
  for (const char* kept : {"mine.cu(3): error: expected a \";\"", "    if (i < N) out[i] = x[i] + y[i];\n    ^\n",
                           "mine.cu(7): warning #177-D", "Remark: The warnings",
                           "kbench_contract_check(19): error: static assertion failed",
                           "3 errors detected in the compilation of \"mine.cu\"."})
    EXPECT_NE(out.find(kept), std::string::npos) << kept << "\n" << out;
  for (const char* dropped : {"passwd", "root:x:0:0", "s3cr3t", "environ", "KBENCH_TOKEN"})
    EXPECT_EQ(out.find(dropped), std::string::npos) << dropped << "\n" << out;
  EXPECT_NE(out.find("[kbench: 6 lines about other files (or quoting them) left out]"), std::string::npos) << out;
}

TEST(CompileLog, AnotherFilesNameDoesNotCountAsTheUsers) {
  // "mine.cu" must be the whole location, not a suffix or a prefix of it.
  const std::string out = FilterCompileLog("/x/mine.cu(1): error: a\n  quoted\nmine.cu.h(2): error: b\n  q2\n", "mine.cu");
  EXPECT_EQ(out.find("quoted"), std::string::npos) << out;
  EXPECT_EQ(out.find("q2"), std::string::npos) << out;
}

TEST(CompileLog, ALongLogIsCapped) {
  std::string log;
  for (int i = 1; i <= 20000; ++i)
    log += "mine.cu(" + std::to_string(i) + "): error: identifier \"undefined_thing\" is undefined\n"
           "    undefined_thing = 1;\n    ^\n\n";
  ASSERT_GT(log.size(), 1u << 20);
  const std::string out = FilterCompileLog(log, "mine.cu");
  EXPECT_LE(out.size(), kMaxCompileLogBytes + 100);
  EXPECT_NE(out.find("[kbench: log cut at 16384 bytes; "), std::string::npos);
  EXPECT_EQ(out.rfind("mine.cu(1): error", 0), 0u);  // the first errors are the ones kept
  const std::string capped = CapLog(log);
  EXPECT_LE(capped.size(), kMaxCompileLogBytes + 100);
  EXPECT_NE(capped.find(std::to_string(log.size() - capped.find("[kbench: log cut")) + " more bytes left out"),
            std::string::npos)
      << capped.substr(capped.size() - 100);
}

TEST(CompileLog, AShortLogIsUnchangedByTheCap) {
  EXPECT_EQ(CapLog("mine.cu(1): warning: x\n"), "mine.cu(1): warning: x\n");
  EXPECT_EQ(FilterCompileLog("", "mine.cu"), "");
}

}  // namespace
}  // namespace kbench::worker

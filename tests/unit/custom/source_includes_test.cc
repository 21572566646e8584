// The include gate before NVRTC (worker/custom/source_includes.h): the contract's headers pass;
// every other #include, however it is spelled (absolute, relative, angle brackets, a macro, split by
// a line splice, a trigraph, a digraph, an escaped name, hidden behind a comment or a string that a
// scanner could misread), and every file probe is refused with the line named and nothing of the
// file in the message.
#include "worker/custom/source_includes.h"

#include <string>

#include "core/registry.h"
#include "gtest/gtest.h"
#include "worker/custom/contract.h"

namespace kbench::worker {
namespace {

absl::Status Check(const std::string& source) { return CheckSourceIncludes(source, "mine.cu"); }

void ExpectRefusedAt(const std::string& source, int line) {
  SCOPED_TRACE(source);
  const absl::Status s = Check(source);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  const std::string m(s.message());
  EXPECT_EQ(m.rfind("mine.cu(" + std::to_string(line) + "): error: ", 0), 0u) << m;
  // The refusal names the line, not the file: no path, no contents.
  for (const char* leak : {"passwd", "environ", "/proc", "/etc", "../"}) EXPECT_EQ(m.find(leak), std::string::npos) << m;
}

TEST(SourceIncludes, TheContractsHeadersPass) {
  EXPECT_TRUE(Check("#include \"kbench_contract.h\"\n__global__ void k() {}\n").ok());
  EXPECT_TRUE(Check("#include <kbench_contract.h>\n").ok());
  EXPECT_TRUE(Check("  #  include <cuda_bf16.h>  // bf16\n#include <cuda_fp16.h> /* half */\n").ok());
  EXPECT_TRUE(Check("#pragma once\n#pragma unroll 4\n_Pragma(\"unroll\")\n#define S(x) #x\n").ok());
}

TEST(SourceIncludes, EveryTemplatePasses) {
  for (const kernels::OpDef& op : kernels::BuiltinRegistry().ops())
    if (std::optional<v1::LaunchContract> c = MakeLaunchContract(op))
      EXPECT_TRUE(Check(c->template_source()).ok()) << op.name;
}

TEST(SourceIncludes, OtherFilesAreRefusedNamingTheLine) {
  ExpectRefusedAt("#include \"/proc/self/environ\"\n", 1);
  ExpectRefusedAt("// a kernel\n\n#include \"/etc/passwd\"\n", 3);
  ExpectRefusedAt("#include </proc/self/environ>\n", 1);
  ExpectRefusedAt("#include \"../../x\"\n", 1);
  ExpectRefusedAt("#include \"x.h\"\n", 1);
  ExpectRefusedAt("#include <stdio.h>\n", 1);
  ExpectRefusedAt("#include \"kbench_contract.h/../../etc/passwd\"\n", 1);
  ExpectRefusedAt("#include \"kbench_contract.h\" \"/etc/passwd\"\n", 1);
  ExpectRefusedAt("#include \"/etc/passwd\n", 1);  // unterminated
}

TEST(SourceIncludes, ComputedIncludesAreRefused) {
  ExpectRefusedAt("#define F \"/etc/passwd\"\n#include F\n", 2);
  ExpectRefusedAt("#define P(x) #x\n#include P(/etc/passwd)\n", 2);
  ExpectRefusedAt("#define H <kbench_contract.h>\n#include H\n", 2);  // even of an allowed name
}

TEST(SourceIncludes, SplicesTrigraphsDigraphsAndEscapesAreSeenThrough) {
  ExpectRefusedAt("int a;\n#inc\\\nlude \"/etc/passwd\"\n", 2);
  ExpectRefusedAt("#include \\\n\"/etc/passwd\"\n", 1);
  ExpectRefusedAt("#include \"/etc/pa\\\nsswd\"\n", 1);
  ExpectRefusedAt("#\\   \ninclude \"/etc/passwd\"\n", 1);  // blanks after the backslash
  ExpectRefusedAt("?\?=include \"/etc/passwd\"\n", 1);
  ExpectRefusedAt("#inc?\?/\nlude \"/etc/passwd\"\n", 1);
  ExpectRefusedAt("%:include \"/etc/passwd\"\n", 1);
  ExpectRefusedAt("# /* c */ include \"/etc/passwd\"\n", 1);
  ExpectRefusedAt("#/*\n*/include \"/etc/passwd\"\n", 1);
  ExpectRefusedAt("#\\u0069nclude \"/etc/passwd\"\n", 1);
  ExpectRefusedAt("\t #\tinclude\t</etc/passwd>\n", 1);
}

TEST(SourceIncludes, NoCommentOrStringCanHideAnInclude) {
  // A scanner that took "/*" in a string for a comment would skip the next line; a compiler would not.
  ExpectRefusedAt("const char* s = \"/*\";\n#include \"/etc/passwd\"\n// */\n", 2);
  // A raw string read as an ordinary one ends early; the #include is still seen.
  ExpectRefusedAt("const char* s = R\"x(\" /* )x\";\n#include \"/etc/passwd\"\n", 2);
  // A comment ended mid-line, a directive after it.
  ExpectRefusedAt("/* a */ #include \"/etc/passwd\"\n", 1);
  // Erring on the side of refusing: even inside a comment.
  ExpectRefusedAt("/*\n#include <stdio.h>\n*/\n", 2);
}

TEST(SourceIncludes, ProbesAndOtherDirectivesAreRefused) {
  ExpectRefusedAt("#if __has_include(\"/etc/passwd\")\n#endif\n", 1);
  ExpectRefusedAt("\n#if __has_include_next(<x>)\n#endif\n", 2);
  ExpectRefusedAt("#if __h\\u0061s_include(<x>)\n#endif\n", 1);
  ExpectRefusedAt("#include_next <cuda_bf16.h>\n", 1);
  ExpectRefusedAt("#import \"/etc/passwd\"\n", 1);
  ExpectRefusedAt("#embed \"/etc/passwd\"\n", 1);
  ExpectRefusedAt("#pragma include_alias(\"a.h\", \"/etc/passwd\")\n", 1);
  ExpectRefusedAt("#pragma GCC dependency \"/etc/passwd\"\n", 1);
  ExpectRefusedAt("_Pragma(\"GCC dependency \\\"/etc/passwd\\\"\")\n", 1);
}

TEST(SourceIncludes, OrdinaryHashesPass) {
  // '#' in ordinary code: stringizing, token pasting, a character literal.
  EXPECT_TRUE(Check("#define CAT(a, b) a##b\n#define STR(x) #x\nconst char c = '#';\n").ok());
  EXPECT_TRUE(Check("// include files? none: the contract is pre-included\n").ok());
}

}  // namespace
}  // namespace kbench::worker

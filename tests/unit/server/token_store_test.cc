// The token file: parsing (comments, roles, names), file:line errors that never echo a token, and
// lookup.
#include "server/auth/token_store.h"

#include <cstdio>
#include <fstream>

#include "gtest/gtest.h"

namespace kbench::server::auth {
namespace {

constexpr char kSubmit[] = "submit-0123456789abcdef";
constexpr char kWorker[] = "worker-0123456789abcdef";
constexpr char kAdmin[] = "admin-0123456789abcdef==";

TEST(TokenStore, ParsesTokensRolesNamesAndComments) {
  const std::string text = std::string("# kbench tokens\n\n") + kSubmit + " submit ci-bot   # the CI\n" +
                           "  " + kWorker + "\tworker,submit\r\n" + kAdmin + " admin alice\n";
  absl::StatusOr<TokenStore> store = TokenStore::Parse(text, "tokens");
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_EQ(store->size(), 3u);
  EXPECT_EQ(store->entry(0).token, kSubmit);
  EXPECT_EQ(store->entry(0).roles, RoleSet({Role::kSubmit}));
  EXPECT_EQ(store->entry(0).name, "ci-bot");
  EXPECT_EQ(store->entry(0).line, 3);
  EXPECT_EQ(store->entry(1).token, kWorker);
  EXPECT_EQ(store->entry(1).roles, RoleSet({Role::kWorker, Role::kSubmit}));
  EXPECT_EQ(store->entry(1).roles.ToString(), "submit,worker");
  EXPECT_EQ(store->entry(1).name, "tokens:4");  // No name: the file and line.
  EXPECT_EQ(store->entry(2).token, kAdmin);
  EXPECT_TRUE(store->entry(2).roles.Has(Role::kAdmin));
  EXPECT_FALSE(store->entry(2).roles.Has(Role::kSubmit));
  EXPECT_EQ(store->entry(2).name, "alice");
}

TEST(TokenStore, FindsEveryTokenExactly) {
  absl::StatusOr<TokenStore> store =
      TokenStore::Parse(std::string(kSubmit) + " submit\n" + kWorker + " worker\n", "t");
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(store->Find(kSubmit), 0u);
  EXPECT_EQ(store->Find(kWorker), 1u);
  const std::string submit = kSubmit;
  EXPECT_EQ(store->Find(submit.substr(0, submit.size() - 1)), std::nullopt);  // A prefix.
  EXPECT_EQ(store->Find(submit + "x"), std::nullopt);                         // Longer.
  EXPECT_EQ(store->Find("submit-0123456789abcdeF"), std::nullopt);            // Case matters.
  EXPECT_EQ(store->Find(""), std::nullopt);
}

TEST(TokenStore, ConstantTimeEqualsComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("ab", "abc"));
  EXPECT_FALSE(ConstantTimeEquals(std::string("ab\0", 3), "ab"));  // A NUL is not the end.
}

TEST(TokenStore, MalformedLinesAreErrorsWithFileAndLine) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::string ok_line = std::string(kAdmin) + " admin\n";
  for (const Case& c : std::vector<Case>{
           {ok_line + kSubmit + "\n", "tokens:2: expected 'TOKEN ROLE[,ROLE] [NAME]', got 1 field"},
           {ok_line + kSubmit + " submit name extra\n", "tokens:2: expected 'TOKEN ROLE[,ROLE] [NAME]', got 4 fields"},
           {ok_line + kSubmit + " reader\n", "tokens:2: unknown role 'reader' (known: submit, worker, admin, plugin)"},
           {ok_line + kSubmit + " submit,\n", "tokens:2: unknown role ''"},
           {ok_line + kSubmit + " Submit\n", "tokens:2: unknown role 'Submit'"},
           {ok_line + "short-token submit\n", "tokens:2: the token is 11 characters; at least 16 are required"},
           {ok_line + "0123456789abcdef\"x submit\n", "tokens:2: the token has a character outside"},
           {ok_line + "0123456789abcd=ef submit\n", "tokens:2: the token has a character outside"},
           {"\n" + ok_line + "# again\n" + kAdmin + " submit\n", "tokens:4: duplicate token (first on line 2)"},
           {"# nothing\n\n", "tokens: no tokens"},
           {"", "tokens: no tokens"},
       }) {
    absl::StatusOr<TokenStore> store = TokenStore::Parse(c.text, "tokens");
    ASSERT_FALSE(store.ok()) << c.text;
    EXPECT_EQ(store.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(store.status().message()).rfind(c.message, 0), 0u)
        << store.status().message() << "\nexpected: " << c.message;
    // A token must not end up in logs through an error message.
    EXPECT_EQ(store.status().message().find(kSubmit), absl::string_view::npos) << store.status().message();
    EXPECT_EQ(store.status().message().find(kAdmin), absl::string_view::npos) << store.status().message();
  }
}

TEST(TokenStore, LoadReadsAFileAndNamesItInErrors) {
  const std::string path = ::testing::TempDir() + "/kbench-token-store-test-tokens";
  std::ofstream(path) << kWorker << " worker node-1\nnot-enough\n";
  absl::StatusOr<TokenStore> store = TokenStore::Load(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(std::string(store.status().message()).rfind(path + ":2: ", 0), 0u) << store.status().message();

  std::ofstream(path) << kWorker << " worker node-1\n";
  store = TokenStore::Load(path);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(store->entry(0).name, "node-1");
  std::remove(path.c_str());

  store = TokenStore::Load(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("--token-file: cannot read '" + path + "'"), absl::string_view::npos)
      << store.status().message();
}

}  // namespace
}  // namespace kbench::server::auth

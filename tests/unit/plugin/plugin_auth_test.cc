// The plugin role: uploading code the fleet will run needs it (submit alone cannot), fetching a
// plugin is for workers, and asking whether one is stored is a read.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/auth/authorizer.h"
#include "server/auth/token_store.h"

namespace kbench::server::auth {
namespace {

using ::testing::HasSubstr;

TEST(PluginRole, UploadNeedsThePluginRole) {
  auto tokens = TokenStore::Parse(
      "submit-token-000000 submit ci\n"
      "plugin-token-000000 submit,plugin ci-plugins\n"
      "worker-token-000000 worker\n"
      "admin-token-0000000 admin\n",
      "tokens");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  Authorizer authorizer(&*tokens, nullptr);
  auto check = [&](const char* method, const char* token) {
    const std::string header = std::string("Bearer ") + token;
    return authorizer.Check(method, {header});
  };
  absl::Status denied = check("UploadPlugin", "submit-token-000000");
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(denied.message(), HasSubstr("needs the plugin or admin role"));
  EXPECT_TRUE(check("UploadPlugin", "plugin-token-000000").ok());
  EXPECT_TRUE(check("/kbench.v1.Coordinator/UploadPlugin", "admin-token-0000000").ok());
  EXPECT_EQ(check("UploadPlugin", "worker-token-000000").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(check("GetPlugin", "worker-token-000000").ok());
  EXPECT_EQ(check("GetPlugin", "plugin-token-000000").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(check("GetPluginInfo", "submit-token-000000").ok());
  EXPECT_TRUE(check("Submit", "plugin-token-000000").ok());
}

TEST(PluginRole, ParsesAndPrints) {
  EXPECT_EQ(ParseRole("plugin"), Role::kPlugin);
  EXPECT_EQ(RoleSet({Role::kSubmit, Role::kPlugin}).ToString(), "submit,plugin");
  auto bad = TokenStore::Parse("some-token-00000000 uploader\n", "tokens");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("known: submit, worker, admin, plugin"));
}

}  // namespace
}  // namespace kbench::server::auth

// The access rules: which role each rpc needs, the rules covering the whole Coordinator service,
// the Bearer header, and the decisions (UNAUTHENTICATED, PERMISSION_DENIED, RESOURCE_EXHAUSTED).
#include "server/auth/authorizer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "kbench/v1/coordinator.grpc.pb.h"
#include "kbench/v1/worker.grpc.pb.h"

namespace kbench::server::auth {
namespace {

constexpr char kSubmit[] = "submit-0123456789abcdef";
constexpr char kWorker[] = "worker-0123456789abcdef";
constexpr char kAdmin[] = "admin-0123456789abcdef";
constexpr char kBoth[] = "both-0123456789abcdef";

TokenStore Tokens() {
  absl::StatusOr<TokenStore> store =
      TokenStore::Parse(absl::StrCat(kSubmit, " submit ci\n", kWorker, " worker node\n", kAdmin, " admin root\n",
                                     kBoth, " submit,worker\n"),
                        "tokens");
  EXPECT_TRUE(store.ok()) << store.status();
  return *std::move(store);
}

std::string Bearer(absl::string_view token) { return absl::StrCat("Bearer ", token); }

TEST(Authorizer, RulesOfEachRpc) {
  for (const char* m : {"Submit", "CancelJob"}) EXPECT_EQ(RequirementOf(m), Requirement::kSubmitRole) << m;
  for (const char* m : {"RegisterWorker", "Heartbeat", "LeaseJob", "ReportProgress", "CompleteJob"})
    EXPECT_EQ(RequirementOf(m), Requirement::kWorkerRole) << m;
  for (const char* m : {"GetJob", "ListJobs", "GetResults", "ListWorkers", "ListKernels", "GetHistory"})
    EXPECT_EQ(RequirementOf(m), Requirement::kAnyToken) << m;
  EXPECT_EQ(RequirementOf("/kbench.v1.Coordinator/Submit"), Requirement::kSubmitRole);
  EXPECT_EQ(RequirementOf("/kbench.v1.Worker/Submit"), std::nullopt);
  EXPECT_EQ(RequirementOf("DropEverything"), std::nullopt);
  EXPECT_EQ(RequirementOf(""), std::nullopt);
}

// A new rpc in coordinator.proto fails this test until it gets a rule (and, in
// GuardedCoordinatorService, a forward; auth_service_test checks that one).
TEST(Authorizer, RulesCoverExactlyTheCoordinatorService) {
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("kbench.v1.Coordinator");
  ASSERT_NE(service, nullptr);
  std::vector<std::string> methods;
  for (int i = 0; i < service->method_count(); ++i) methods.push_back(service->method(i)->name());
  std::vector<std::string> ruled = MethodsWithRules();
  std::sort(methods.begin(), methods.end());
  std::sort(ruled.begin(), ruled.end());
  EXPECT_EQ(methods, ruled);
}

// The Worker service (kbench-worker --listen) under the same rules: a new rpc in worker.proto fails
// this test until it gets one (and a forward in GuardedWorkerService).
TEST(Authorizer, WorkerRulesCoverExactlyTheWorkerService) {
  ASSERT_NE(v1::WorkerInfo::descriptor(), nullptr);  // links worker.proto's descriptors in
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("kbench.v1.Worker");
  ASSERT_NE(service, nullptr);
  std::vector<std::string> methods;
  for (int i = 0; i < service->method_count(); ++i) methods.push_back(service->method(i)->name());
  std::vector<std::string> ruled = WorkerMethodsWithRules();
  std::sort(methods.begin(), methods.end());
  std::sort(ruled.begin(), ruled.end());
  EXPECT_EQ(methods, ruled);
  EXPECT_EQ(RequirementOf("/kbench.v1.Worker/RunJob"), Requirement::kSubmitRole);
  EXPECT_EQ(RequirementOf("/kbench.v1.Worker/GetInfo"), Requirement::kAnyToken);
  EXPECT_EQ(RequirementOf("/kbench.v1.Worker/Submit"), std::nullopt);
  EXPECT_EQ(RequirementOf("RunJob"), std::nullopt);  // by path only: not a Coordinator rpc
}

TEST(Authorizer, AdminSatisfiesEveryRule) {
  for (Requirement r : {Requirement::kAnyToken, Requirement::kSubmitRole, Requirement::kWorkerRole}) {
    EXPECT_TRUE(Satisfies(RoleSet({Role::kAdmin}), r));
    EXPECT_FALSE(Satisfies(RoleSet(), r));
  }
  EXPECT_TRUE(Satisfies(RoleSet({Role::kSubmit}), Requirement::kAnyToken));
  EXPECT_TRUE(Satisfies(RoleSet({Role::kSubmit}), Requirement::kSubmitRole));
  EXPECT_FALSE(Satisfies(RoleSet({Role::kSubmit}), Requirement::kWorkerRole));
  EXPECT_TRUE(Satisfies(RoleSet({Role::kWorker}), Requirement::kAnyToken));
  EXPECT_FALSE(Satisfies(RoleSet({Role::kWorker}), Requirement::kSubmitRole));
  EXPECT_TRUE(Satisfies(RoleSet({Role::kWorker}), Requirement::kWorkerRole));
}

TEST(Authorizer, BearerHeader) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("bearer abc"), "abc");  // The scheme is case-insensitive (RFC 7235).
  EXPECT_EQ(BearerToken("BEARER \t abc  "), "abc");
  EXPECT_EQ(BearerToken("Bearer"), std::nullopt);
  EXPECT_EQ(BearerToken("Bearer "), std::nullopt);
  EXPECT_EQ(BearerToken("Bearerabc"), std::nullopt);
  EXPECT_EQ(BearerToken("Bearer a b"), std::nullopt);
  EXPECT_EQ(BearerToken("Basic abc"), std::nullopt);
  EXPECT_EQ(BearerToken("abc"), std::nullopt);
  EXPECT_EQ(BearerToken(""), std::nullopt);
}

TEST(Authorizer, Decisions) {
  const TokenStore tokens = Tokens();
  const Authorizer authorizer(&tokens, nullptr);
  auto check = [&](absl::string_view method, std::vector<std::string> headers) {
    std::vector<absl::string_view> views(headers.begin(), headers.end());
    return authorizer.Check(method, views);
  };
  absl::Status s = check("ListJobs", {});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_NE(s.message().find("missing bearer token"), absl::string_view::npos) << s;
  s = check("ListJobs", {"Bearer nope-nope-nope-nope"});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(s.message(), "invalid bearer token");
  s = check("ListJobs", {absl::StrCat("Basic ", kAdmin)});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_NE(s.message().find("malformed"), absl::string_view::npos) << s;
  EXPECT_EQ(check("ListJobs", {Bearer(kAdmin), Bearer(kAdmin)}).code(), absl::StatusCode::kUnauthenticated);

  s = check("RegisterWorker", {Bearer(kSubmit)});
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), "token 'ci' (role submit) may not call RegisterWorker: it needs the worker or admin role");
  s = check("Submit", {Bearer(kWorker)});
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), "token 'node' (role worker) may not call Submit: it needs the submit or admin role");
  EXPECT_EQ(check("Unknown", {Bearer(kAdmin)}).code(), absl::StatusCode::kPermissionDenied);

  for (const char* token : {kSubmit, kWorker, kAdmin, kBoth}) EXPECT_TRUE(check("GetJob", {Bearer(token)}).ok());
  for (const char* token : {kSubmit, kAdmin, kBoth}) EXPECT_TRUE(check("CancelJob", {Bearer(token)}).ok());
  for (const char* token : {kWorker, kAdmin, kBoth}) EXPECT_TRUE(check("LeaseJob", {Bearer(token)}).ok());
  EXPECT_TRUE(check("/kbench.v1.Coordinator/Submit", {absl::StrCat("bearer ", kSubmit)}).ok());
}

TEST(Authorizer, RateLimitIsPerTokenAndCountsAllowedCallsOnly) {
  const TokenStore tokens = Tokens();
  SteadyTime now = SteadyTime() + std::chrono::hours(1);
  RateLimiter limiter(tokens.size(), /*rate_per_second=*/1, /*burst=*/2, [&now] { return now; });
  const Authorizer authorizer(&tokens, &limiter);
  auto check = [&](absl::string_view method, const char* token) {
    const std::string header = Bearer(token);
    return authorizer.Check(method, {header});
  };
  // Denied calls spend nothing.
  EXPECT_EQ(check("RegisterWorker", kSubmit).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(check("Submit", kSubmit).ok());
  EXPECT_TRUE(check("GetJob", kSubmit).ok());
  absl::Status s = check("GetJob", kSubmit);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "token 'ci' is over its rate limit (1 requests/s, burst 2); retry later");
  EXPECT_TRUE(check("GetJob", kWorker).ok());  // Another token's bucket.
  now += std::chrono::seconds(1);
  EXPECT_TRUE(check("GetJob", kSubmit).ok());
  EXPECT_EQ(check("GetJob", kSubmit).code(), absl::StatusCode::kResourceExhausted);
}

// The admin controls of the series (muting, threshold overrides, steps) are for the admin role alone:
// a submit token, which may run any job, may not silence an alert. Who changed one is the token's name.
TEST(Authorizer, SeriesControlsNeedTheAdminRole) {
  EXPECT_EQ(RequirementOf("SetSeriesControl"), Requirement::kAdminRole);
  EXPECT_EQ(RequirementOf("ListSeriesControls"), Requirement::kAnyToken);
  for (Role r : {Role::kSubmit, Role::kWorker, Role::kPlugin})
    EXPECT_FALSE(Satisfies(RoleSet({r}), Requirement::kAdminRole));
  EXPECT_TRUE(Satisfies(RoleSet({Role::kAdmin}), Requirement::kAdminRole));
  const TokenStore tokens = Tokens();
  const Authorizer authorizer(&tokens, nullptr);
  const std::string submit = Bearer(kSubmit), both = Bearer(kBoth), admin = Bearer(kAdmin);
  absl::Status denied = authorizer.Check("SetSeriesControl", {submit});
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied) << denied;
  EXPECT_NE(denied.message().find("needs the admin role"), absl::string_view::npos) << denied;
  EXPECT_EQ(authorizer.Check("/kbench.v1.Coordinator/SetSeriesControl", {both}).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(authorizer.Check("SetSeriesControl", {admin}).ok());
  EXPECT_TRUE(authorizer.Check("ListSeriesControls", {submit}).ok());
  EXPECT_EQ(authorizer.CallerName({admin}), "root");
  EXPECT_EQ(authorizer.CallerName({Bearer("unknown-0123456789abcdef")}), "");
  EXPECT_EQ(authorizer.CallerName({}), "");
}

}  // namespace
}  // namespace kbench::server::auth

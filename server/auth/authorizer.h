// Who may call what on the Coordinator service. Each rpc requires any valid token (reads), the
// submit role (Submit, CancelJob), the worker role (the worker rpcs, GetPlugin) or the plugin role
// (UploadPlugin: code the fleet will run) or the admin role alone (SetSeriesControl: muting,
// threshold overrides and steps of the regression series); admin satisfies every rule. The Worker service of a
// worker that takes jobs straight from a caller has rules too (by gRPC path, "/kbench.v1.Worker/RunJob"):
// RunJob takes the submit role, GetInfo any token.
// Authorizer::Check turns a call's `authorization` metadata into the decision:
//   no or malformed header, or an unknown token   UNAUTHENTICATED
//   a valid token without the role the rpc needs   PERMISSION_DENIED
//   a valid token over its rate limit              RESOURCE_EXHAUSTED
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/auth/rate_limiter.h"
#include "server/auth/token_store.h"

namespace kbench::server::auth {

enum class Requirement { kAnyToken, kSubmitRole, kWorkerRole, kPluginRole, kAdminRole };

// The rule of a Coordinator rpc, by its name in the proto ("Submit") or its gRPC path
// ("/kbench.v1.Coordinator/Submit"). nullopt for a method without a rule: Check denies it.
std::optional<Requirement> RequirementOf(absl::string_view method);
// Every method name that has a rule (for the test that the rules cover the service).
std::vector<std::string> MethodsWithRules();
// The same for the Worker service.
std::vector<std::string> WorkerMethodsWithRules();
// Whether roles meet the requirement (admin meets all).
bool Satisfies(RoleSet roles, Requirement requirement);

// The token of an `authorization` header value "Bearer TOKEN" (scheme case-insensitive, one or more
// blanks); nullopt when the value is not of that form.
std::optional<absl::string_view> BearerToken(absl::string_view header);

class Authorizer {
 public:
  // tokens (and limiter, when not null) must outlive the Authorizer.
  Authorizer(const TokenStore* tokens, RateLimiter* limiter) : tokens_(tokens), limiter_(limiter) {}

  // The decision on a call of `method` that carried these `authorization` header values.
  absl::Status Check(absl::string_view method, const std::vector<absl::string_view>& authorization) const;
  // The name of the token these headers carry (recorded with what an admin changes); "" when they
  // carry no known token.
  std::string CallerName(const std::vector<absl::string_view>& authorization) const;

 private:
  const TokenStore* tokens_;
  RateLimiter* limiter_;
};

}  // namespace kbench::server::auth

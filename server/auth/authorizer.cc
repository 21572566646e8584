// The access rules of the Coordinator's and the Worker's rpcs; see authorizer.h.
#include "server/auth/authorizer.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace kbench::server::auth {
namespace {

constexpr absl::string_view kServicePath = "/kbench.v1.Coordinator/";

// Every rpc of kbench.v1.Coordinator. A new rpc gets no access until it is listed here.
constexpr std::pair<absl::string_view, Requirement> kRules[] = {
    {"Submit", Requirement::kSubmitRole},
    {"CancelJob", Requirement::kSubmitRole},
    {"GetJob", Requirement::kAnyToken},
    {"ListJobs", Requirement::kAnyToken},
    {"GetResults", Requirement::kAnyToken},
    {"ListWorkers", Requirement::kAnyToken},
    {"ListKernels", Requirement::kAnyToken},
    {"GetHistory", Requirement::kAnyToken},
    {"SetSeriesControl", Requirement::kAdminRole},
    {"ListSeriesControls", Requirement::kAnyToken},
    {"RegisterWorker", Requirement::kWorkerRole},
    {"Heartbeat", Requirement::kWorkerRole},
    {"LeaseJob", Requirement::kWorkerRole},
    {"ReportProgress", Requirement::kWorkerRole},
    {"CompleteJob", Requirement::kWorkerRole},
    {"UploadPlugin", Requirement::kPluginRole},
    {"GetPluginInfo", Requirement::kAnyToken},
    {"GetPlugin", Requirement::kWorkerRole},
};

// Every rpc of kbench.v1.Worker, the service of a worker that takes jobs straight from a caller
// (kbench-worker --listen): running one is submitting it. Matched by gRPC path only.
constexpr absl::string_view kWorkerServicePath = "/kbench.v1.Worker/";
constexpr std::pair<absl::string_view, Requirement> kWorkerRules[] = {
    {"GetInfo", Requirement::kAnyToken},
    {"RunJob", Requirement::kSubmitRole},
};

absl::string_view ShortName(absl::string_view method) {
  absl::ConsumePrefix(&method, kServicePath);
  return method;
}

}  // namespace

std::optional<Requirement> RequirementOf(absl::string_view method) {
  if (absl::ConsumePrefix(&method, kWorkerServicePath)) {
    for (const auto& [rpc, requirement] : kWorkerRules)
      if (rpc == method) return requirement;
    return std::nullopt;
  }
  if (absl::StartsWith(method, "/") && !absl::StartsWith(method, kServicePath)) return std::nullopt;
  const absl::string_view name = ShortName(method);
  for (const auto& [rpc, requirement] : kRules)
    if (rpc == name) return requirement;
  return std::nullopt;
}

std::vector<std::string> MethodsWithRules() {
  std::vector<std::string> out;
  for (const auto& rule : kRules) out.emplace_back(rule.first);
  return out;
}

std::vector<std::string> WorkerMethodsWithRules() {
  std::vector<std::string> out;
  for (const auto& rule : kWorkerRules) out.emplace_back(rule.first);
  return out;
}

bool Satisfies(RoleSet roles, Requirement requirement) {
  if (roles.Has(Role::kAdmin)) return true;
  switch (requirement) {
    case Requirement::kAnyToken:
      return !roles.empty();
    case Requirement::kSubmitRole:
      return roles.Has(Role::kSubmit);
    case Requirement::kWorkerRole:
      return roles.Has(Role::kWorker);
    case Requirement::kPluginRole:
      return roles.Has(Role::kPlugin);
    case Requirement::kAdminRole:
      return false;  // Admin alone, checked above.
  }
  return false;
}

std::optional<absl::string_view> BearerToken(absl::string_view header) {
  header = absl::StripAsciiWhitespace(header);
  constexpr absl::string_view kScheme = "bearer";
  if (header.size() <= kScheme.size() || !absl::EqualsIgnoreCase(header.substr(0, kScheme.size()), kScheme))
    return std::nullopt;
  absl::string_view rest = header.substr(kScheme.size());
  if (rest[0] != ' ' && rest[0] != '\t') return std::nullopt;
  rest = absl::StripLeadingAsciiWhitespace(rest);
  if (rest.empty() || rest.find_first_of(" \t") != absl::string_view::npos) return std::nullopt;
  return rest;
}

absl::Status Authorizer::Check(absl::string_view method, const std::vector<absl::string_view>& authorization) const {
  if (authorization.empty())
    return absl::UnauthenticatedError(
        "missing bearer token: this coordinator requires 'authorization: Bearer TOKEN' "
        "(kbench-client --token or $KBENCH_TOKEN; kbench-worker --token)");
  if (authorization.size() > 1) return absl::UnauthenticatedError("more than one authorization header");
  const std::optional<absl::string_view> token = BearerToken(authorization[0]);
  if (!token) return absl::UnauthenticatedError("malformed authorization header: expected 'Bearer TOKEN'");
  const std::optional<size_t> index = tokens_->Find(*token);
  if (!index) return absl::UnauthenticatedError("invalid bearer token");
  const TokenEntry& entry = tokens_->entry(*index);
  const std::optional<Requirement> requirement = RequirementOf(method);
  const absl::string_view name = ShortName(method);
  if (!requirement) return absl::PermissionDeniedError(absl::StrCat("no access rule for method ", name));
  if (!Satisfies(entry.roles, *requirement)) {
    if (*requirement == Requirement::kAdminRole)
      return absl::PermissionDeniedError(absl::StrCat("token '", entry.name, "' (role ", entry.roles.ToString(),
                                                      ") may not call ", name, ": it needs the admin role"));
    const absl::string_view needed = *requirement == Requirement::kSubmitRole   ? "submit"
                                     : *requirement == Requirement::kPluginRole ? "plugin"
                                                                                : "worker";
    return absl::PermissionDeniedError(absl::StrCat("token '", entry.name, "' (role ", entry.roles.ToString(),
                                                    ") may not call ", name, ": it needs the ", needed,
                                                    " or admin role"));
  }
  if (limiter_ != nullptr && !limiter_->Allow(*index))
    return absl::ResourceExhaustedError(absl::StrFormat(
        "token '%s' is over its rate limit (%g requests/s, burst %g); retry later", entry.name,
        limiter_->rate_per_second(), limiter_->burst()));
  return absl::OkStatus();
}

std::string Authorizer::CallerName(const std::vector<absl::string_view>& authorization) const {
  if (authorization.size() != 1) return "";
  const std::optional<absl::string_view> token = BearerToken(authorization[0]);
  if (!token) return "";
  const std::optional<size_t> index = tokens_->Find(*token);
  return index ? tokens_->entry(*index).name : "";
}

}  // namespace kbench::server::auth

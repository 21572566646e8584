// A job's kernel libraries, fetched and described by the runner; see plugin_libraries.h.
#include "worker/plugin/plugin_libraries.h"

#include "absl/strings/str_cat.h"

namespace kbench::worker {

absl::StatusOr<PluginLibraries::Library> RunnerPluginLibraries::Load(const std::string& sha256,
                                                                     const std::string& field) {
  Library lib;
  lib.sha256 = sha256;
  absl::StatusOr<std::string> path = cache_.Ensure(sha256, fetch_);
  if (!path.ok())
    return absl::FailedPreconditionError(absl::StrCat(field, ": cannot fetch plugin ", sha256, ": ", path.status().message()));
  lib.path = *path;
  runner::RunnerRequest req;
  req.set_kind(runner::RunnerRequest::DESCRIBE);
  req.set_plugin_path(lib.path);
  absl::StatusOr<runner::RunnerResponse> resp = runner_.CallRunner(req, std::chrono::seconds(60));
  if (!resp.ok())
    return absl::FailedPreconditionError(absl::StrCat(field, ": loading plugin ", sha256, " failed: ", resp.status().message()));
  if (!resp->error().empty())
    return absl::FailedPreconditionError(absl::StrCat(field, ": plugin ", sha256, " refused: ", resp->error()));
  lib.ops.assign(resp->catalog().begin(), resp->catalog().end());
  return lib;
}

}  // namespace kbench::worker

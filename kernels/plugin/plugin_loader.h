// Loads a kernel library through its plugin entry point (kbench_plugin.h): the runner's own copy of
// libkbench_kernels.so and a job's plugins alike. A library of another ABI version or another type
// layout is refused with a message naming both sides. Only the runner child loads plugins.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/registry.h"
#include "plugin/kbench_plugin.h"

namespace kbench::kernels::plugin {

// OK when a library's entry can be used by this build; FAILED_PRECONDITION naming both versions
// (or both fingerprints) otherwise. `origin` names the library in the message.
absl::Status CheckCompatible(const KbenchPluginV1& entry, const std::string& origin);

class LoadedPlugin {
 public:
  // dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND): the library's own symbols first, so that two
  // builds loaded side by side never call into each other. NOT_FOUND when the file is missing,
  // INVALID_ARGUMENT when it is no plugin, FAILED_PRECONDITION when it is incompatible.
  static absl::StatusOr<std::unique_ptr<LoadedPlugin>> Open(const std::string& path);
  // The libkbench_kernels.so this process is linked with, through the same entry point.
  static absl::StatusOr<std::unique_ptr<LoadedPlugin>> OpenOwn();

  // The library stays mapped for the life of the process: its registry's functions and its static
  // objects live in it, and a runner is a short-lived child anyway.
  ~LoadedPlugin() = default;

  const Registry& registry() const { return *registry_; }
  const std::string& path() const { return path_; }
  uint32_t abi_version() const { return abi_version_; }
  const std::string& build_id() const { return build_id_; }
  const std::string& suite_version() const { return suite_version_; }

 private:
  LoadedPlugin() = default;
  static absl::StatusOr<std::unique_ptr<LoadedPlugin>> FromEntry(const KbenchPluginV1* entry, const std::string& path);

  const Registry* registry_ = nullptr;
  std::string path_;
  uint32_t abi_version_ = 0;
  std::string build_id_, suite_version_;
};

}  // namespace kbench::kernels::plugin

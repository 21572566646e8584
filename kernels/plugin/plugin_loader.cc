// dlopen of kernel libraries and the ABI check; see plugin_loader.h.
#include "plugin/plugin_loader.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "plugin/plugin_layout.h"

namespace kbench::kernels::plugin {
namespace {

// AddressSanitizer's runtime refuses RTLD_DEEPBIND (google/sanitizers issue 611). A sanitized build
// (`make sanitize`) loads without it; its libraries, test plugins included, are linked -Bsymbolic,
// which keeps their own calls inside them as well.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kDlopenFlags = RTLD_NOW | RTLD_LOCAL;
#else
constexpr int kDlopenFlags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#endif

}  // namespace

absl::Status CheckCompatible(const KbenchPluginV1& entry, const std::string& origin) {
  if (entry.abi_version != KBENCH_PLUGIN_ABI_VERSION)
    return absl::FailedPreconditionError(absl::StrCat(
        origin, ": plugin ABI version ", entry.abi_version, " is not this runner's version ", KBENCH_PLUGIN_ABI_VERSION,
        " (rebuild the kernel library from a matching kbench)"));
  if (entry.layout_fingerprint != LayoutFingerprint())
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: plugin ABI version %u matches, but its type layout %016x differs from this runner's %016x (a "
        "change of kernels/core/op.h or another compiler or standard library; rebuild against this kbench)",
        origin, entry.abi_version, entry.layout_fingerprint, LayoutFingerprint()));
  if (entry.registry == nullptr) return absl::FailedPreconditionError(absl::StrCat(origin, ": plugin has no registry"));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LoadedPlugin>> LoadedPlugin::FromEntry(const KbenchPluginV1* entry,
                                                                      const std::string& path) {
  if (entry == nullptr) return absl::InvalidArgumentError(absl::StrCat(path, ": ", KBENCH_PLUGIN_ENTRY_SYMBOL, " returned null"));
  if (absl::Status s = CheckCompatible(*entry, path); !s.ok()) return s;
  std::unique_ptr<LoadedPlugin> p(new LoadedPlugin());
  p->registry_ = static_cast<const Registry*>(entry->registry);
  p->path_ = path;
  p->abi_version_ = entry->abi_version;
  p->build_id_ = entry->build_id ? entry->build_id : "";
  p->suite_version_ = entry->suite_version ? entry->suite_version : "";
  return p;
}

absl::StatusOr<std::unique_ptr<LoadedPlugin>> LoadedPlugin::Open(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return absl::NotFoundError(absl::StrCat(path, ": no such plugin file"));
  void* handle = dlopen(path.c_str(), kDlopenFlags);
  if (handle == nullptr) return absl::InvalidArgumentError(absl::StrCat("cannot load plugin: ", dlerror()));
  auto entry = reinterpret_cast<KbenchPluginEntryV1>(dlsym(handle, KBENCH_PLUGIN_ENTRY_SYMBOL));
  if (entry == nullptr) {
    dlclose(handle);  // Nothing of it ran beyond its static initializers.
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a kbench kernel plugin (no ", KBENCH_PLUGIN_ENTRY_SYMBOL, " symbol)"));
  }
  // The handle is never closed (see ~LoadedPlugin): an incompatible library's static objects may
  // already exist, and unloading code that built them is not safe either.
  return FromEntry(entry(), path);
}

absl::StatusOr<std::unique_ptr<LoadedPlugin>> LoadedPlugin::OpenOwn() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&kbench_plugin_v1), &info) == 0 || info.dli_fname == nullptr)
    return absl::InternalError("cannot find the kernel library this runner is linked with");
  // The same file is already mapped: dlopen hands back that copy, through the same checks as a plugin.
  return Open(info.dli_fname);
}

}  // namespace kbench::kernels::plugin

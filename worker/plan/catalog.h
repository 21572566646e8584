// The kernel catalog a worker advertises: the registry's ops as v1::OpInfo, keeping only the
// variants of the backends this worker has. Also the lookup from an op name to its OpDef.
#pragma once

#include <set>
#include <string_view>
#include <vector>

#include "core/op.h"
#include "core/registry.h"
#include "kbench/v1/catalog.pb.h"

namespace kbench::worker {

// The op with only the variants whose backend is in `backends`; its dtypes are those any kept
// variant supports, in the op's order. Presets become problems with named dims. With the CUDA backend,
// the op's launch contract for custom kernels when it has one.
v1::OpInfo ToOpInfo(const kernels::OpDef& op, const std::set<kernels::Backend>& backends);

class Catalog {
 public:
  // Keeps pointers into `registry`, which must outlive the catalog. Ops with no variant for these
  // backends are left out: this worker could run nothing of them.
  Catalog(const kernels::Registry& registry, std::set<kernels::Backend> backends);

  const std::vector<v1::OpInfo>& ops() const { return infos_; }
  const v1::OpInfo* FindInfo(std::string_view name) const;
  const kernels::OpDef* FindOp(std::string_view name) const;

 private:
  std::vector<const kernels::OpDef*> defs_;  // Same order as infos_.
  std::vector<v1::OpInfo> infos_;
};

}  // namespace kbench::worker

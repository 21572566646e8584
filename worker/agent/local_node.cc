// WorkerNode's form for a process that loads kernels (tests): backends in this process, each wrapped
// in a LocalDevice (runner/local_runner.h) so that the node drives them as it drives runner children.
// Built into kbench_worker_lib, never into kbench-worker.
#include "core/registry.h"
#include "worker/agent/worker_node.h"
#include "worker/runner/local_runner.h"

namespace kbench::worker {

WorkerNode::Parts WorkerNode::LocalParts(std::vector<std::unique_ptr<Backend>> backends,
                                         const kernels::Registry& registry) {
  Parts parts;
  bool first = true;
  for (auto& b : backends) {
    // A null backend is left for the node's own check to refuse.
    if (b == nullptr) {
      parts.backends.push_back(nullptr);
      continue;
    }
    auto device = std::make_unique<LocalDevice>(std::move(b), registry);
    if (first) parts.catalog = device->catalog().ops();  // All of one kind: the first one's.
    first = false;
    parts.backends.push_back(std::move(device));
  }
  return parts;
}

WorkerNode::WorkerNode(WorkerConfig config, std::vector<std::unique_ptr<Backend>> backends,
                       const kernels::Registry& registry)
    : WorkerNode(std::move(config), LocalParts(std::move(backends), registry)) {}

WorkerNode::WorkerNode(WorkerConfig config, std::unique_ptr<Backend> backend, const kernels::Registry& registry)
    : WorkerNode(std::move(config), One(std::move(backend)), registry) {}

}  // namespace kbench::worker

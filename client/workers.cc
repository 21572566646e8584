// `kbench-client workers`: the registered workers, their devices and calibrated ceilings.
#include "client/commands.h"
#include "client/format.h"

namespace kbench::client {

const CommandSpec& WorkersSpec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "workers";
    s.summary = "List the registered workers: state, health, devices, calibrated copy GB/s and f32 GFLOP/s, current job.";
    s.flags = {FormatFlagSpec()};
    for (auto& c : ConnectionFlagSpecs()) s.flags.push_back(c);
    s.details = "One row per device. json: kbench.v1.WorkerStatus messages without the kernel catalog (see kernels).";
    s.examples = {"kbench-client workers", "kbench-client workers --format json"};
    return s;
  }();
  return spec;
}

int RunWorkers(const std::vector<std::string>& argv, const ConnectionFlags& globals, Io& io) {
  const auto& spec = WorkersSpec();
  ParsedArgs args;
  if (auto exit = ParseOrExit(spec, argv, io, &args)) return *exit;
  auto format = ParseFormat(args.Get("format", "table"));
  if (!format.ok()) return UsageError(io, spec, format.status().message());
  auto conn = Connect(args, globals);
  if (!conn.ok()) return UsageError(io, spec, conn.status().message());
  v1::ListWorkersResponse resp;
  auto ctx = conn->Context();
  if (auto s = api::FromGrpc(conn->stub->ListWorkers(ctx.get(), {}, &resp)); !s.ok())
    return CallError(io, "workers", s, conn->options.address);
  io.out << FormatWorkers({resp.workers().begin(), resp.workers().end()}, *format, io.now_ms());
  return kExitOk;
}

}  // namespace kbench::client

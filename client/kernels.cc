// `kbench-client kernels`: the kernel catalog of the fleet: ops, dims, dtypes, presets, variants.
#include "client/commands.h"
#include "client/format.h"
#include "client/format_contract.h"
#include "client/triton_template.h"

namespace kbench::client {

const CommandSpec& KernelsSpec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "kernels";
    s.summary = "List the ops the workers can run: dims, dtypes, presets (with problem counts) and variants.";
    s.flags = {{"op", "NAME", "Only this op"},
               {"contract", "", "With --op: the launch contract of custom kernels (submit --source) and a starting template"},
               {"template", "", "With --op: only the contract's starting template, to save as a .cu (or with --lang triton, .py) file"},
               {"lang", "L", "With --template: cuda (default) or triton (a @triton.jit kernel and its launch description)"},
               {"presets", "", "With --op: every preset's problems, each as --shape takes it"},
               FormatFlagSpec()};
    for (auto& c : ConnectionFlagSpecs()) s.flags.push_back(c);
    s.details = "json: kbench.v1.OpInfo messages, with every preset's problems.";
    s.examples = {"kbench-client kernels", "kbench-client kernels --op gemm --format md",
                  "kbench-client kernels --op rmsnorm --contract",
                  "kbench-client kernels --op rope --presets",
                  "kbench-client kernels --op rmsnorm --template > my_rmsnorm.cu",
                  "kbench-client kernels --op rmsnorm --template --lang triton > my_rmsnorm.py"};
    return s;
  }();
  return spec;
}

int RunKernels(const std::vector<std::string>& argv, const ConnectionFlags& globals, Io& io) {
  const auto& spec = KernelsSpec();
  ParsedArgs args;
  if (auto exit = ParseOrExit(spec, argv, io, &args)) return *exit;
  auto format = ParseFormat(args.Get("format", "table"));
  if (!format.ok()) return UsageError(io, spec, format.status().message());
  const bool template_only = args.GetBool("template");  // implies --contract
  const bool contract = args.GetBool("contract") || template_only;
  const std::string lang = args.Get("lang", "cuda");
  if (args.Has("lang") && !template_only) return UsageError(io, spec, "--lang: only with --template");
  if (lang != "cuda" && lang != "triton")
    return UsageError(io, spec, "--lang: '" + lang.substr(0, 32) + "' is not a language (cuda or triton)");
  if (contract && !args.Has("op"))
    return UsageError(io, spec, template_only ? "--template: needs --op" : "--contract: needs --op");
  const bool presets = args.GetBool("presets");
  if (presets && !args.Has("op")) return UsageError(io, spec, "--presets: needs --op");
  if (presets && contract) return UsageError(io, spec, "--presets: not with --contract or --template");
  auto conn = Connect(args, globals);
  if (!conn.ok()) return UsageError(io, spec, conn.status().message());
  v1::ListKernelsRequest req;
  req.set_op(args.Get("op"));
  v1::ListKernelsResponse resp;
  auto ctx = conn->Context();
  if (auto s = api::FromGrpc(conn->stub->ListKernels(ctx.get(), req, &resp)); !s.ok())
    return CallError(io, "kernels", s, conn->options.address);
  if (args.Has("op") && resp.ops().empty()) {
    io.err << kProgram << ": kernels: no op named '" << args.Get("op") << "' (is a worker with it registered?)\n";
    return kExitFailure;
  }
  if (contract) {
    const v1::OpInfo& op = resp.ops(0);
    if (!op.has_contract()) {
      io.err << kProgram << ": kernels: op '" << op.name()
             << "' takes no custom kernels on the registered workers (a launch contract comes with CUDA workers)\n";
      return kExitFailure;
    }
    if (template_only && lang == "triton") io.out << TritonTemplate(op);
    else io.out << (template_only ? op.contract().template_source() : FormatContract(op, *format == Format::kJson));
    return kExitOk;
  }
  if (presets) {
    io.out << FormatPresets(resp.ops(0), *format);
    return kExitOk;
  }
  io.out << FormatKernels({resp.ops().begin(), resp.ops().end()}, *format);
  return kExitOk;
}

}  // namespace kbench::client

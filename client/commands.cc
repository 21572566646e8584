// Dispatch of kbench-client's command line to its subcommands, the top-level help, and the plumbing
// the subcommands share (connection flags, error reporting); see commands.h.
#include "client/commands.h"

#include <chrono>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/quote.h"
#include "client/plot.h"

namespace kbench::client {
namespace {

// Flags accepted before the subcommand: the connection, and --help.
const CommandSpec& GlobalSpec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "";
    s.positional = "COMMAND [ARGS...]";
    s.flags = ConnectionFlagSpecs();
    return s;
  }();
  return spec;
}

std::string TopUsage() {
  std::string s = absl::StrCat(
      "Usage: ", kProgram, " [connection flags] COMMAND [flags] [ARGS...]\n\n",
      "Client of the kbench coordinator: submit kernel benchmark jobs and read their results.\n\nCommands:\n");
  for (const auto& c : Commands()) {
    const auto& spec = c.spec();
    absl::StrAppend(&s, "  ", spec.name, std::string(10 - std::min<size_t>(spec.name.size(), 9), ' '), spec.summary,
                    "\n");
  }
  absl::StrAppend(&s, "  help      Show help for a command: ", kProgram, " help submit\n\nConnection flags:\n");
  for (const auto& f : ConnectionFlagSpecs()) {
    std::string left = absl::StrCat("  --", f.name, " ", f.value_name);
    absl::StrAppend(&s, left, std::string(left.size() < 27 ? 27 - left.size() : 1, ' '), f.help, "\n");
  }
  absl::StrAppend(&s,
                  "\nThe coordinator and token come from the flags, else $KBENCH_COORDINATOR and $KBENCH_TOKEN, else\n"
                  "the config file (--config, else $KBENCH_CONFIG, else ~/.config/kbench/client.conf) with lines\n"
                  "`coordinator = host:port` and `token = ...` (TLS: tls_ca, tls_cert, tls_key), else ",
                  kDefaultCoordinator, " without a token.\n",
                  "\nOutput: --format table (default), md (GitHub Markdown), json (API messages), csv (raw numbers).\n",
                  "Exit status: 0 ok; 1 a job or result failed, a regression (history), or the service failed;\n"
                  "2 usage or invalid request.\n",
                  "\nExamples:\n  ", kProgram, " kernels\n  ", kProgram,
                  " submit --op rmsnorm --dtype bf16 --shape 8192x4096 --wait\n  ", kProgram,
                  " --coordinator kbench:50051 results j-abc --format md\n  ", kProgram,
                  " plot j-abc -o roofline.svg\n");
  return s;
}

const Command* FindCommand(absl::string_view name) {
  for (const auto& c : Commands())
    if (c.spec().name == name) return &c;
  return nullptr;
}

int UnknownCommand(Io& io, absl::string_view name) {
  io.err << kProgram << ": unknown command '" << name << "'\nRun '" << kProgram << " --help' for usage.\n";
  return kExitUsage;
}

}  // namespace

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<FlagSpec> ConnectionFlagSpecs() {
  return {
      {"coordinator", "HOST:PORT", "Coordinator address (default: $KBENCH_COORDINATOR, config, 127.0.0.1:50051)"},
      {"token", "TOKEN", "Bearer token (default: $KBENCH_TOKEN, config)"},
      {"config", "PATH", "Config file (default: $KBENCH_CONFIG, ~/.config/kbench/client.conf)"},
      {"tls-ca", "PEM", "CA certificates that verify the coordinator: TLS (default: $KBENCH_TLS_CA, config)"},
      {"tls-cert", "PEM", "Client certificate for mTLS, with --tls-key (default: $KBENCH_TLS_CERT, config)"},
      {"tls-key", "PEM", "Key of --tls-cert (default: $KBENCH_TLS_KEY, config)"},
  };
}

FlagSpec FormatFlagSpec() { return {"format", "FORMAT", "Output: table, md, json or csv (default table)"}; }

ConnectionFlags ConnectionFlagsFrom(const ParsedArgs& args, const ConnectionFlags& globals) {
  ConnectionFlags out = globals;
  if (args.Has("coordinator")) out.coordinator = args.Get("coordinator");
  if (args.Has("token")) out.token = args.Get("token");
  if (args.Has("config")) out.config = args.Get("config");
  if (args.Has("tls-ca")) out.tls_ca = args.Get("tls-ca");
  if (args.Has("tls-cert")) out.tls_cert = args.Get("tls-cert");
  if (args.Has("tls-key")) out.tls_key = args.Get("tls-key");
  return out;
}

absl::StatusOr<Connection> Connect(const ParsedArgs& args, const ConnectionFlags& globals) {
  auto options = ResolveConnection(ConnectionFlagsFrom(args, globals));
  if (!options.ok()) return options.status();
  // Unreadable TLS files are reported here, not as a failure of every call.
  if (auto credentials = api::MakeChannelCredentials(*options); !credentials.ok()) return credentials.status();
  Connection c;
  c.options = *options;
  c.stub = v1::Coordinator::NewStub(api::MakeChannel(c.options));
  return c;
}

std::optional<int> ParseOrExit(const CommandSpec& spec, const std::vector<std::string>& args, Io& io, ParsedArgs* out) {
  auto parsed = ParseArgs(spec, args);
  if (!parsed.ok()) return UsageError(io, spec, parsed.status().message());
  if (parsed->help) {
    io.out << Usage(kProgram, spec);
    return kExitOk;
  }
  *out = std::move(*parsed);
  return std::nullopt;
}

int UsageError(Io& io, const CommandSpec& spec, absl::string_view message) {
  io.err << kProgram << ": " << spec.name << ": " << message << "\nRun '" << kProgram << " " << spec.name
         << " --help' for usage.\n";
  return kExitUsage;
}

int CallError(Io& io, absl::string_view command, const absl::Status& status, absl::string_view address) {
  // A server's message is shown cut: it may quote what was sent, and a terminal is no place for megabytes.
  io.err << kProgram << ": " << command << ": " << absl::StatusCodeToString(status.code()) << ": "
         << api::CutText(status.message(), api::kMaxShownStatusMessageBytes) << "\n";
  if (absl::StrContains(absl::AsciiStrToLower(status.message()), "metadata size exceeds"))
    io.err << "(the coordinator's error message was too long to travel in a gRPC header, so its reason was lost; "
           << "a coordinator with capped error messages says it in full)\n";
  if (status.code() == absl::StatusCode::kUnavailable && !address.empty())
    io.err << "(is a coordinator running at " << address << "? set --coordinator, $KBENCH_COORDINATOR or "
           << "the config file)\n";
  const bool request_wrong =
      status.code() == absl::StatusCode::kInvalidArgument || status.code() == absl::StatusCode::kFailedPrecondition;
  return request_wrong ? kExitUsage : kExitFailure;
}

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      {SubmitSpec, RunSubmit},   {StatusSpec, RunStatus},   {ResultsSpec, RunResults},
      {HistorySpec, RunHistory}, {SeriesSpec, RunSeries}, {CompareSpec, RunCompare}, {WorkersSpec, RunWorkers}, {KernelsSpec, RunKernels}, {PlotSpec, RunPlot},
  };
  return commands;
}

int RunCli(const std::vector<std::string>& args, Io& io) {
  // Global flags end at the first argument that is not a flag: the subcommand.
  size_t i = 0;
  std::vector<std::string> globals_args;
  while (i < args.size() && absl::StartsWith(args[i], "-") && args[i] != "--") {
    globals_args.push_back(args[i]);
    const bool takes_value = args[i].find('=') == std::string::npos && args[i] != "-h" && args[i] != "--help";
    if (takes_value && i + 1 < args.size()) globals_args.push_back(args[++i]);
    ++i;
  }
  auto globals = ParseArgs(GlobalSpec(), globals_args);
  if (!globals.ok()) {
    io.err << kProgram << ": " << globals.status().message() << "\nRun '" << kProgram << " --help' for usage.\n";
    return kExitUsage;
  }
  if (globals->help) {
    io.out << TopUsage();
    return kExitOk;
  }
  if (i >= args.size()) {
    io.err << TopUsage();
    return kExitUsage;
  }
  const std::string name = args[i];
  std::vector<std::string> rest(args.begin() + static_cast<long>(i) + 1, args.end());
  if (name == "help") {
    if (rest.empty()) {
      io.out << TopUsage();
      return kExitOk;
    }
    const Command* c = FindCommand(rest[0]);
    if (c == nullptr) return UnknownCommand(io, rest[0]);
    io.out << Usage(kProgram, c->spec());
    return kExitOk;
  }
  const Command* c = FindCommand(name);
  if (c == nullptr) return UnknownCommand(io, name);
  const ConnectionFlags connection = ConnectionFlagsFrom(*globals, ConnectionFlags{});
  return c->run(rest, connection, io);
}

}  // namespace kbench::client

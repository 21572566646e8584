// The subcommands of kbench-client and the plumbing they share: streams, exit statuses, connection
// flags, error reporting. Each subcommand lives in its own file (submit.cc, status.cc, ...) and
// exposes its flag spec (for help) and a Run function (for dispatch and tests).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/channel.h"
#include "api/stats/verdict.h"
#include "client/args.h"
#include "client/connection.h"
#include "kbench/v1/coordinator.grpc.pb.h"

namespace kbench::client {

inline constexpr char kProgram[] = "kbench-client";

// Exit statuses shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;        // A job or result failed, or the server failed the call.
inline constexpr int kExitUsage = 2;          // Bad flags or input, or the server rejected the request.
inline constexpr int kExitInterrupted = 130;  // Ctrl-C during `submit --wait` (jobs keep running).

int64_t SystemNowMs();

// What a subcommand runs with: main() fills it from the process, tests with string streams.
struct Io {
  std::ostream& out;
  std::ostream& err;
  bool err_is_tty = false;  // Live progress redraws one line on a terminal, else prints a line per change.
  int err_columns = 80;     // Terminal width, so that the redrawn line never wraps.
  std::atomic<bool>* interrupted = nullptr;       // Set by the SIGINT handler while catching.
  std::atomic<bool>* catch_interrupts = nullptr;  // While true, SIGINT sets `interrupted` instead of killing.
  std::chrono::milliseconds poll_interval{200};
  std::function<int64_t()> now_ms = SystemNowMs;
};

// --coordinator, --token, --config: accepted before the subcommand and by every subcommand.
std::vector<FlagSpec> ConnectionFlagSpecs();
// --format table|md|json|csv.
FlagSpec FormatFlagSpec();
// The subcommand's connection flags over those given before it.
ConnectionFlags ConnectionFlagsFrom(const ParsedArgs& args, const ConnectionFlags& globals);

// A channel and stub to the coordinator, with the options needed to make call contexts.
struct Connection {
  api::ChannelOptions options;
  std::unique_ptr<v1::Coordinator::Stub> stub;
  std::unique_ptr<grpc::ClientContext> Context(std::chrono::milliseconds timeout = std::chrono::seconds(30)) const {
    return api::MakeContext(options, timeout);
  }
};
absl::StatusOr<Connection> Connect(const ParsedArgs& args, const ConnectionFlags& globals);

// Parses a subcommand's arguments. On --help prints the usage and returns 0; on a bad flag prints the
// error with a usage hint and returns 2; returns nullopt when the subcommand should go on.
std::optional<int> ParseOrExit(const CommandSpec& spec, const std::vector<std::string>& args, Io& io, ParsedArgs* out);
// "kbench-client: submit: --dtype: unknown dtype 'x'" and a hint to --help; returns 2.
int UsageError(Io& io, const CommandSpec& spec, absl::string_view message);
// "kbench-client: submit: INVALID_ARGUMENT: <message>"; returns 2 for INVALID_ARGUMENT and
// FAILED_PRECONDITION (the request is wrong), 1 otherwise (the service failed). With the coordinator's
// `address`, an UNAVAILABLE error also says where the client looked, the usual cause being a wrong one.
int CallError(Io& io, absl::string_view command, const absl::Status& status, absl::string_view address = "");

// The subcommands.
struct Command {
  const CommandSpec& (*spec)();
  int (*run)(const std::vector<std::string>& args, const ConnectionFlags& globals, Io& io);
};
const std::vector<Command>& Commands();

const CommandSpec& SubmitSpec();
int RunSubmit(const std::vector<std::string>& args, const ConnectionFlags& globals, Io& io);
const CommandSpec& StatusSpec();
int RunStatus(const std::vector<std::string>& args, const ConnectionFlags& globals, Io& io);
const CommandSpec& ResultsSpec();
int RunResults(const std::vector<std::string>& args, const ConnectionFlags& globals, Io& io);
const CommandSpec& WorkersSpec();
int RunWorkers(const std::vector<std::string>& args, const ConnectionFlags& globals, Io& io);
const CommandSpec& KernelsSpec();
int RunKernels(const std::vector<std::string>& args, const ConnectionFlags& globals, Io& io);
const CommandSpec& HistorySpec();
int RunHistory(const std::vector<std::string>& args, const ConnectionFlags& globals, Io& io);
const CommandSpec& SeriesSpec();
int RunSeries(const std::vector<std::string>& args, const ConnectionFlags& globals, Io& io);
const CommandSpec& CompareSpec();
int RunCompare(const std::vector<std::string>& args, const ConnectionFlags& globals, Io& io);

// `compare`'s offline before/after report of two result sets (format_compare.cc): pure, for tests.
enum class Format;
// threshold, alpha and min_samples with their defaults: api::VerdictRule (api/stats/verdict.h).
struct CompareOptions : api::VerdictRule {};
struct CompareReport {
  std::string text;  // The report in the requested format.
  int exit_status = 0;  // 1 when a pair is SLOWER or the head is not OK where the base was OK.
};
CompareReport CompareResults(const std::vector<v1::Result>& base, const std::vector<v1::Result>& head,
                             const CompareOptions& options, Format format);
// The same report for the results of an A/B job: base and head paired by Result.ab_pair.
CompareReport CompareAbResults(const std::vector<v1::Result>& results, const CompareOptions& options, Format format);
// The verdict of one pair, as the reports give it: "SLOWER", "FASTER", "SAME", "AMBIGUOUS", or "-"
// when a side is not OK. The one verdict of every compare.
const char* JudgePair(const v1::Result& base, const v1::Result& head, const CompareOptions& options);

// The results of several jobs, concatenated in the order given (each job's in index order). `jobs`,
// when not null, receives each job as GetResults returned it.
absl::StatusOr<std::vector<v1::Result>> FetchResults(const Connection& conn, const std::vector<std::string>& ids,
                                                     bool include_samples, std::vector<v1::Job>* jobs);

// The whole command line after the program name: global flags, the subcommand and its arguments;
// also `help [SUBCOMMAND]` and `--help`. Returns the exit status.
int RunCli(const std::vector<std::string>& args, Io& io);

}  // namespace kbench::client

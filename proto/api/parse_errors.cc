// The parse-error interceptor; see parse_errors.h.
#include "api/parse_errors.h"

#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/stubs/common.h"
#include "api/quote.h"

#if GOOGLE_PROTOBUF_VERSION < 4022000
#include "google/protobuf/stubs/logging.h"
#define KBENCH_PROTOBUF_LOG_HANDLER 1
#endif

namespace kbench::api {
namespace {

using grpc::experimental::InterceptionHookPoints;

// The string field the last failed parse on this thread refused for invalid UTF-8.
thread_local std::string bad_utf8_field;

#ifdef KBENCH_PROTOBUF_LOG_HANDLER
google::protobuf::LogHandler* previous_handler = nullptr;

// protobuf: "String field 'kbench.v1.JobSpec.op' contains invalid UTF-8 data when parsing a protocol
// buffer. ..." Noted and not logged: the caller is told, and a flood of bad requests must not flood
// the log. Every other line goes on.
void NoteInvalidUtf8(google::protobuf::LogLevel level, const char* filename, int line, const std::string& message) {
  static constexpr absl::string_view kPrefix = "String field '";
  if (absl::StartsWith(message, kPrefix) && absl::StrContains(message, "invalid UTF-8 data when parsing")) {
    const size_t end = message.find('\'', kPrefix.size());
    bad_utf8_field = message.substr(kPrefix.size(), end == std::string::npos ? 0 : end - kPrefix.size());
    return;
  }
  if (previous_handler != nullptr) previous_handler(level, filename, line, message);
}
#endif

void InstallLogHandler() {
#ifdef KBENCH_PROTOBUF_LOG_HANDLER
  static std::once_flag once;
  std::call_once(once, [] { previous_handler = google::protobuf::SetLogHandler(&NoteInvalidUtf8); });
#endif
}

bool IsParseFailureStatus(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::INTERNAL ||
         (status.error_code() == grpc::StatusCode::UNIMPLEMENTED && status.error_message().empty());
}

class ParseErrorInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit ParseErrorInterceptor(grpc::experimental::ServerRpcInfo* info) : method_(info->method()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    // A unary or server-streaming request is parsed before this hook; nullptr: it did not parse.
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() == nullptr) {
      failed_ = true;
      field_ = std::move(bad_utf8_field);
      bad_utf8_field.clear();
    }
    // The sync server answers a request that did not parse INTERNAL; the callback server answers it
    // UNIMPLEMENTED with an empty message (its handler is never called).
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS) && failed_ &&
        IsParseFailureStatus(methods->GetSendStatus()))
      methods->ModifySendStatus(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, ParseErrorMessage(method_, field_)));
    methods->Proceed();
  }

 private:
  const std::string method_;
  bool failed_ = false;
  std::string field_;
};

class ParseErrorInterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override {
    return new ParseErrorInterceptor(info);
  }
};

// "kbench.v1.SubmitRequest" for "/kbench.v1.Coordinator/Submit"; the method itself when unknown.
std::string RequestTypeOf(const std::string& method) {
  std::string dotted = method;
  if (absl::StartsWith(dotted, "/")) dotted.erase(0, 1);
  const size_t slash = dotted.find('/');
  if (slash != std::string::npos) dotted[slash] = '.';
  const google::protobuf::MethodDescriptor* m =
      google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(dotted);
  return m != nullptr ? m->input_type()->full_name() : absl::StrCat("the request of ", method);
}

}  // namespace

std::string ParseErrorMessage(const std::string& method, const std::string& bad_utf8_field) {
  const std::string type = RequestTypeOf(method);
  if (!bad_utf8_field.empty())
    return CutText(absl::StrCat(type, ": string field ", bad_utf8_field,
                                " is not valid UTF-8 (strings must be UTF-8; nothing was done)"),
                   kMaxStatusMessageBytes);
  return CutText(absl::StrCat(type, ": the request does not parse (a string field that is not valid UTF-8, or bytes ",
                              "that are not a ", type, "); nothing was done"),
                 kMaxStatusMessageBytes);
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeParseErrorInterceptorFactory() {
  InstallLogHandler();
  return std::make_unique<ParseErrorInterceptorFactory>();
}

}  // namespace kbench::api

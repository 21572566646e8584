// Requests a server cannot parse, answered INVALID_ARGUMENT with a reason instead of gRPC's
// INTERNAL (sync server) or UNIMPLEMENTED (callback server) with an empty message. Protobuf refuses
// a proto3 string that is not UTF-8 while gRPC parses the request, before any handler runs, so only an interceptor sees the failure: it rewrites
// the status to name the request's message type and, when protobuf reported it, the string field
// ("kbench.v1.SubmitRequest: string field kbench.v1.JobSpec.op is not valid UTF-8 ...").
#pragma once

#include <memory>
#include <string>

#include "grpcpp/support/server_interceptor.h"

namespace kbench::api {

// The factory to give grpc::ServerBuilder::experimental().SetInterceptorCreators. The first call
// installs a protobuf log handler (process-wide, once) that notes, per thread, which string field a
// parse refused for invalid UTF-8; protobuf's other log lines go on to the handler before it.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeParseErrorInterceptorFactory();

// The status message for a request of `method` ("/kbench.v1.Coordinator/Submit") that did not parse;
// bad_utf8_field: the full name of the string field protobuf refused, or empty.
std::string ParseErrorMessage(const std::string& method, const std::string& bad_utf8_field);

}  // namespace kbench::api

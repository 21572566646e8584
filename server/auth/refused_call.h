// Streaming calls of gRPC's callback API refused before they start: a reactor that finishes at once
// with a status (a denied token, a server shutting down) and never reads or writes a message.
// Unary calls need none: their context's DefaultReactor() finishes the same way.
#pragma once

#include "grpcpp/support/server_callback.h"
#include "grpcpp/support/status.h"

namespace kbench::server::auth {

template <typename Request>
class RefusedRead final : public grpc::ServerReadReactor<Request> {
 public:
  explicit RefusedRead(grpc::Status status) { this->Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

template <typename Response>
class RefusedWrite final : public grpc::ServerWriteReactor<Response> {
 public:
  explicit RefusedWrite(grpc::Status status) { this->Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

}  // namespace kbench::server::auth

// The plugin rpcs' streams as callback reactors: UploadPlugin reads the chunks a client sends into a
// PluginStore upload, GetPlugin writes a stored plugin back in 1 MiB chunks. Their file work runs on
// the service's CallPool, one step at a time, never on gRPC's threads; each holds the request gate's
// pass (when there is a gate) until the call is done.
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/server_callback.h"
#include "kbench/v1/coordinator.grpc.pb.h"
#include "server/service/call_pool.h"
#include "server/service/request_gate.h"
#include "server/store/plugin_store.h"

namespace kbench::server {

// FAILED_PRECONDITION: the coordinator was started without a plugin store.
absl::Status NoPluginStore();

// pool and plugins (may be null: the call fails with NoPluginStore) must outlive the call; resp is
// the call's response.
grpc::ServerReadReactor<v1::UploadPluginRequest>* StartPluginUpload(CallPool* pool,
                                                                    std::optional<RequestGate::Pass> pass,
                                                                    const PluginStore* plugins,
                                                                    v1::UploadPluginResponse* resp);
grpc::ServerWriteReactor<v1::PluginChunk>* StartPluginDownload(CallPool* pool, std::optional<RequestGate::Pass> pass,
                                                               const PluginStore* plugins, std::string sha256);

// Streams refused before they start (the gate closed).
grpc::ServerReadReactor<v1::UploadPluginRequest>* RefusedUpload(grpc::Status status);
grpc::ServerWriteReactor<v1::PluginChunk>* RefusedDownload(grpc::Status status);

}  // namespace kbench::server

// The plugin streams' reactors; see plugin_streams.h. Each step (open, append a chunk, read a chunk,
// finish) is one task on the pool; the next read or write is started from there.
#include "server/service/plugin_streams.h"

#include <fstream>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/bounds.h"
#include "api/channel.h"
#include "api/plugin_spec.h"
#include "api/quote.h"
#include "server/auth/refused_call.h"

namespace kbench::server {
namespace {

using api::ToGrpc;

constexpr size_t kPluginChunkBytes = 1 << 20;

class UploadReactor final : public grpc::ServerReadReactor<v1::UploadPluginRequest> {
 public:
  UploadReactor(CallPool* pool, std::optional<RequestGate::Pass> pass, const PluginStore* plugins,
                v1::UploadPluginResponse* resp)
      : pool_(pool), pass_(std::move(pass)), plugins_(plugins), resp_(resp) {
    pool_->Run([this] { Begin(); });
  }
  // A message, or the end of the stream (ok false: the client is done, or went away).
  void OnReadDone(bool ok) override {
    pool_->Run([this, ok] { ok ? Take() : End(); });
  }
  void OnDone() override { delete this; }

 private:
  void Begin() {
    if (plugins_ == nullptr) return Finish(ToGrpc(NoPluginStore()));
    absl::StatusOr<std::unique_ptr<PluginStore::Upload>> upload = plugins_->BeginUpload();
    if (!upload.ok()) return Finish(ToGrpc(upload.status()));
    upload_ = *std::move(upload);
    StartRead(&chunk_);
  }

  void Take() {
    if (first_) {
      expected_ = chunk_.expected_sha256();
      if (absl::Status s = api::CheckSize("name", chunk_.name(), api::kMaxShortTextBytes); !s.ok())
        return Finish(ToGrpc(s));
      if (!expected_.empty() && !api::IsSha256Hex(expected_))
        return Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                   absl::StrCat("expected_sha256: ", api::Quote(expected_),
                                                " is not a SHA-256 (64 lower-case hex digits)")));
    }
    first_ = false;
    if (chunk_.data().size() > kPluginChunkBytes)
      return Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                 absl::StrCat("data: at most ", kPluginChunkBytes, " bytes per message")));
    if (absl::Status s = upload_->Append(chunk_.data()); !s.ok()) return Finish(ToGrpc(s));
    StartRead(&chunk_);
  }

  void End() {
    absl::StatusOr<StoredPlugin> stored = upload_->Finish(expected_);
    if (!stored.ok()) return Finish(ToGrpc(stored.status()));
    resp_->set_sha256(stored->sha256);
    resp_->set_size_bytes(stored->size_bytes);
    resp_->set_already_stored(stored->already_stored);
    Finish(grpc::Status::OK);
  }

  CallPool* const pool_;
  const std::optional<RequestGate::Pass> pass_;  // Held until the call is done.
  const PluginStore* const plugins_;
  v1::UploadPluginResponse* const resp_;
  std::unique_ptr<PluginStore::Upload> upload_;  // Destroyed unfinished: the partial file goes.
  v1::UploadPluginRequest chunk_;
  std::string expected_;
  bool first_ = true;
};

class DownloadReactor final : public grpc::ServerWriteReactor<v1::PluginChunk> {
 public:
  DownloadReactor(CallPool* pool, std::optional<RequestGate::Pass> pass, const PluginStore* plugins,
                  std::string sha256)
      : pool_(pool), pass_(std::move(pass)), plugins_(plugins), sha256_(std::move(sha256)) {
    pool_->Run([this] { Open(); });
  }
  void OnWriteDone(bool ok) override {
    if (!ok) return Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the reader went away"));
    pool_->Run([this] { Next(); });
  }
  void OnDone() override { delete this; }

 private:
  void Open() {
    if (plugins_ == nullptr) return Finish(ToGrpc(NoPluginStore()));
    absl::StatusOr<std::string> path = plugins_->PathOf(sha256_);
    if (!path.ok()) return Finish(ToGrpc(path.status()));
    in_.open(*path, std::ios::binary);
    if (!in_) return Finish(grpc::Status(grpc::StatusCode::INTERNAL, absl::StrCat("cannot read ", *path)));
    in_.seekg(0, std::ios::end);
    size_ = in_.tellg();
    in_.seekg(0);
    Next();
  }

  // The next chunk (the first one carries the plugin's size), or the end.
  void Next() {
    chunk_.Clear();
    std::string* data = chunk_.mutable_data();
    data->resize(kPluginChunkBytes);
    if (!in_.read(data->data(), static_cast<std::streamsize>(data->size())) && in_.gcount() == 0)
      return Finish(grpc::Status::OK);
    data->resize(static_cast<size_t>(in_.gcount()));
    if (first_) chunk_.set_size_bytes(size_);
    first_ = false;
    StartWrite(&chunk_);
  }

  CallPool* const pool_;
  const std::optional<RequestGate::Pass> pass_;  // Held until the call is done.
  const PluginStore* const plugins_;
  const std::string sha256_;
  std::ifstream in_;
  int64_t size_ = 0;
  v1::PluginChunk chunk_;
  bool first_ = true;
};

}  // namespace

absl::Status NoPluginStore() {
  return absl::FailedPreconditionError("this coordinator keeps no kernel plugins (start it with --plugin_dir)");
}

grpc::ServerReadReactor<v1::UploadPluginRequest>* StartPluginUpload(CallPool* pool,
                                                                    std::optional<RequestGate::Pass> pass,
                                                                    const PluginStore* plugins,
                                                                    v1::UploadPluginResponse* resp) {
  return new UploadReactor(pool, std::move(pass), plugins, resp);
}

grpc::ServerWriteReactor<v1::PluginChunk>* StartPluginDownload(CallPool* pool, std::optional<RequestGate::Pass> pass,
                                                               const PluginStore* plugins, std::string sha256) {
  return new DownloadReactor(pool, std::move(pass), plugins, std::move(sha256));
}

grpc::ServerReadReactor<v1::UploadPluginRequest>* RefusedUpload(grpc::Status status) {
  return new auth::RefusedRead<v1::UploadPluginRequest>(std::move(status));
}

grpc::ServerWriteReactor<v1::PluginChunk>* RefusedDownload(grpc::Status status) {
  return new auth::RefusedWrite<v1::PluginChunk>(std::move(status));
}

}  // namespace kbench::server

// Plugin upload with a check for the hash first; see plugin_upload.h.
#include "client/plugin_upload.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "api/sha256.h"
#include "client/units.h"

namespace kbench::client {

absl::StatusOr<UploadedPlugin> UploadPlugin(const Connection& conn, const std::string& path) {
  absl::StatusOr<std::string> sha = api::Sha256OfFile(path);
  if (!sha.ok()) return absl::NotFoundError(absl::StrCat(path, ": cannot read the file"));
  UploadedPlugin out;
  out.sha256 = *sha;
  {
    v1::GetPluginInfoRequest req;
    req.set_sha256(*sha);
    v1::GetPluginInfoResponse resp;
    auto ctx = conn.Context();
    absl::Status s = api::FromGrpc(conn.stub->GetPluginInfo(ctx.get(), req, &resp));
    if (s.ok()) {
      out.size_bytes = resp.size_bytes();
      return out;
    }
    if (!absl::IsNotFound(s)) return s;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read the file"));
  auto ctx = conn.Context(std::chrono::minutes(10));
  v1::UploadPluginResponse resp;
  std::unique_ptr<grpc::ClientWriter<v1::UploadPluginRequest>> writer = conn.stub->UploadPlugin(ctx.get(), &resp);
  std::string buf(1 << 20, '\0');
  bool first = true;
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    v1::UploadPluginRequest chunk;
    if (first) {
      chunk.set_name(std::filesystem::path(path).filename().string());
      chunk.set_expected_sha256(*sha);
    }
    first = false;
    chunk.set_data(buf.data(), static_cast<size_t>(in.gcount()));
    if (!writer->Write(chunk)) break;  // The server ended the call: Finish says why.
  }
  writer->WritesDone();
  if (absl::Status s = api::FromGrpc(writer->Finish()); !s.ok()) return s;
  out.size_bytes = resp.size_bytes();
  out.uploaded = !resp.already_stored();
  return out;
}

std::optional<std::string> UploadPluginFlag(const Connection& conn, const std::string& command, const std::string& flag,
                                            const std::string& path, Io& io, int* exit) {
  absl::StatusOr<UploadedPlugin> up = UploadPlugin(conn, path);
  if (!up.ok()) {
    if (absl::IsNotFound(up.status()) && up.status().message().find(path) == 0) {
      io.err << kProgram << ": " << command << ": --" << flag << ": " << up.status().message() << "\n";
      *exit = kExitUsage;
    } else {
      *exit = CallError(io, command, absl::Status(up.status().code(), absl::StrCat("--", flag, " ", path, ": ",
                                                                                   up.status().message())),
                        conn.options.address);
    }
    return std::nullopt;
  }
  io.err << path << ": " << up->sha256.substr(0, 12) << " (" << FormatBytes(up->size_bytes) << ", "
         << (up->uploaded ? "uploaded" : "already on the coordinator") << ")\n";
  return up->sha256;
}

}  // namespace kbench::client

#include "worker/isolation/framing.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace kbench::worker {
namespace {

constexpr uint32_t kMaxFrameBytes = 256u << 20;
constexpr size_t kReadChunkBytes = 1u << 20;

absl::Status WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return absl::UnavailableError(absl::StrCat("pipe write failed: ", strerror(errno)));
    p += w;
    n -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

absl::Status ReadAll(int fd, char* p, size_t n, std::chrono::steady_clock::time_point deadline, bool has_deadline) {
  while (n > 0) {
    int wait_ms = -1;
    if (has_deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return absl::DeadlineExceededError("no reply in time");
      wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
    }
    pollfd pfd{fd, POLLIN, 0};
    int r = poll(&pfd, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return absl::DeadlineExceededError("no reply in time");
    ssize_t got = read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return absl::UnavailableError("peer closed the pipe");
    p += got;
    n -= static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteMessage(int fd, const google::protobuf::MessageLite& msg) {
  std::string body;
  if (!msg.SerializeToString(&body)) return absl::InternalError("serialize failed");
  const uint32_t n = static_cast<uint32_t>(body.size());
  const char len[4] = {char(n & 0xff), char((n >> 8) & 0xff), char((n >> 16) & 0xff), char((n >> 24) & 0xff)};
  if (auto s = WriteAll(fd, len, 4); !s.ok()) return s;
  return WriteAll(fd, body.data(), body.size());
}

absl::Status ReadMessage(int fd, google::protobuf::MessageLite* msg, std::chrono::milliseconds timeout) {
  const bool has_deadline = timeout != std::chrono::milliseconds::max();
  const auto deadline = has_deadline ? std::chrono::steady_clock::now() + timeout : std::chrono::steady_clock::time_point{};
  unsigned char len[4];
  if (auto s = ReadAll(fd, reinterpret_cast<char*>(len), 4, deadline, has_deadline); !s.ok()) return s;
  const uint32_t n = len[0] | (len[1] << 8) | (len[2] << 16) | (uint32_t(len[3]) << 24);
  if (n > kMaxFrameBytes) return absl::DataLossError(absl::StrCat("frame of ", n, " bytes"));
  // Grown as the bytes arrive, so that a length alone (a corrupt or hostile frame) costs at most a chunk.
  std::string body;
  while (body.size() < n) {
    const size_t have = body.size();
    const size_t step = std::min<size_t>(n - have, kReadChunkBytes);
    body.resize(have + step);
    if (auto s = ReadAll(fd, body.data() + have, step, deadline, has_deadline); !s.ok()) return s;
  }
  if (!msg->ParseFromString(body)) return absl::DataLossError("malformed message");
  return absl::OkStatus();
}

}  // namespace kbench::worker

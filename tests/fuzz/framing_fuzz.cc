// Fuzz target: the worker <-> runner pipe framing (worker/isolation/framing.cc). The input's first
// byte picks the reader (even: the worker reading RunnerResponse frames; odd: the runner reading
// RunnerRequest frames) and the rest is the pipe's whole content, the writer then gone. Messages are
// read until an error, which must be one of the documented three; never a crash. Each message read
// goes back through WriteMessage and reads back the same.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "kbench/runner/runner.pb.h"
#include "tests/fuzz/fuzz_check.h"
#include "worker/isolation/framing.h"

namespace {

constexpr int kPipeBytes = 1 << 20;  // The most an unprivileged process may set (pipe-max-size).

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    FUZZ_CHECK(pipe2(fds, O_CLOEXEC) == 0);
    r = fds[0];
    w = fds[1];
    fcntl(w, F_SETPIPE_SZ, kPipeBytes);
  }
  ~Pipe() {
    if (r >= 0) close(r);
    if (w >= 0) close(w);
  }
  // Writes everything without blocking (the content fits the pipe), then closes the writing end.
  void Fill(const uint8_t* data, size_t size) {
    while (size > 0) {
      ssize_t n = write(w, data, size);
      FUZZ_CHECK(n > 0);
      data += n;
      size -= static_cast<size_t>(n);
    }
    close(w);
    w = -1;
  }
};

std::unique_ptr<google::protobuf::MessageLite> NewMessage(bool request) {
  if (request) return std::make_unique<kbench::runner::RunnerRequest>();
  return std::make_unique<kbench::runner::RunnerResponse>();
}

// Map fields serialize in hash order unless asked otherwise: compare the deterministic form.
std::string Canonical(const google::protobuf::MessageLite& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    FUZZ_CHECK(m.SerializeToCodedStream(&coded));
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool request = data[0] & 1;
  ++data;
  --size;
  Pipe pipe;
  if (size > static_cast<size_t>(fcntl(pipe.w, F_GETPIPE_SZ))) return 0;  // Would block the writer.
  pipe.Fill(data, size);
  const auto timeout = std::chrono::milliseconds(10'000);  // Never reached: the writer is gone.
  while (true) {
    auto msg = NewMessage(request);
    absl::Status s = kbench::worker::ReadMessage(pipe.r, msg.get(), timeout);
    if (!s.ok()) {
      FUZZ_CHECK(absl::IsUnavailable(s) || absl::IsDataLoss(s));
      break;
    }
    // The frame the writer would send for it reads back as the same message.
    Pipe echo;
    const std::string body = Canonical(*msg);
    if (body.size() + 4 > static_cast<size_t>(fcntl(echo.w, F_GETPIPE_SZ))) continue;
    FUZZ_CHECK(kbench::worker::WriteMessage(echo.w, *msg).ok());
    close(echo.w);
    echo.w = -1;
    auto back = NewMessage(request);
    FUZZ_CHECK(kbench::worker::ReadMessage(echo.r, back.get(), timeout).ok());
    FUZZ_CHECK(Canonical(*back) == body);
  }
  return 0;
}

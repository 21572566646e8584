// The worker <-> runner pipe framing (worker/isolation/framing.h): frames larger than the reader's
// 1 MiB chunk arrive whole, a frame cut short or over the limit is an error, never a message.
#include "worker/isolation/framing.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "kbench/runner/runner.pb.h"

namespace kbench::worker {
namespace {

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    if (r >= 0) close(r);
    CloseWriter();
  }
  void CloseWriter() {
    if (w >= 0) close(w);
    w = -1;
  }
};

TEST(Framing, AFrameOfSeveralChunksArrivesWhole) {
  runner::RunnerRequest sent;
  sent.set_op(std::string((3u << 20) + 12345, 'x'));  // 3 MiB and a bit: four reads of the body.
  sent.set_variant("v");
  Pipe pipe;
  // The pipe holds 64 KiB: the writer blocks until the reader has taken the rest.
  std::thread writer([&] {
    EXPECT_TRUE(WriteMessage(pipe.w, sent).ok());
    pipe.CloseWriter();
  });
  runner::RunnerRequest got;
  const absl::Status s = ReadMessage(pipe.r, &got);
  writer.join();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(got.op(), sent.op());
  EXPECT_EQ(got.variant(), "v");
  EXPECT_TRUE(absl::IsUnavailable(ReadMessage(pipe.r, &got)));  // Then the writer is gone.
}

TEST(Framing, AnEmptyMessageIsAFrameOfLengthZero) {
  Pipe pipe;
  ASSERT_TRUE(WriteMessage(pipe.w, runner::RunnerResponse()).ok());
  runner::RunnerResponse got;
  got.set_error("stale");
  ASSERT_TRUE(ReadMessage(pipe.r, &got).ok());
  EXPECT_EQ(got.error(), "");
}

void WriteBytes(int fd, const std::string& bytes) { ASSERT_EQ(write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size())); }

TEST(Framing, ALengthWithoutItsBytesIsUnavailable) {
  Pipe pipe;
  WriteBytes(pipe.w, std::string("\x00\x00\x00\x10", 4) + "abc");  // 256 MiB promised, 3 bytes sent.
  pipe.CloseWriter();
  runner::RunnerResponse got;
  EXPECT_TRUE(absl::IsUnavailable(ReadMessage(pipe.r, &got)));
}

TEST(Framing, ALengthOverTheLimitOrABodyThatIsNoMessageIsDataLoss) {
  Pipe over;
  WriteBytes(over.w, std::string("\x01\x00\x00\x10", 4));  // 256 MiB + 1.
  runner::RunnerResponse got;
  EXPECT_TRUE(absl::IsDataLoss(ReadMessage(over.r, &got)));
  Pipe garbage;
  WriteBytes(garbage.w, std::string("\x04\x00\x00\x00\xff\xff\xff\xff", 8));
  EXPECT_TRUE(absl::IsDataLoss(ReadMessage(garbage.r, &got)));
}

TEST(Framing, NothingInTimeIsDeadlineExceeded) {
  Pipe pipe;  // The writer stays open and silent.
  runner::RunnerResponse got;
  EXPECT_TRUE(absl::IsDeadlineExceeded(ReadMessage(pipe.r, &got, std::chrono::milliseconds(1))));
}

}  // namespace
}  // namespace kbench::worker

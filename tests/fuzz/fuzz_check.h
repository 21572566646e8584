// What the fuzz targets share: FUZZ_CHECK (an invariant of the parser; its failure aborts, which
// libFuzzer and the replayer report as a crash) and MemFile (bytes as a file path, for parsers that
// read files, kept in memory so that fuzzing writes nothing to disk).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(cond)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                   \
    }                                                                                 \
  } while (0)

namespace kbench::fuzz {

// An anonymous in-memory file holding `bytes`, named by path() (/proc/self/fd/N) while it lives.
class MemFile {
 public:
  explicit MemFile(const std::string& bytes) : fd_(memfd_create("kbench-fuzz", 0)) {
    FUZZ_CHECK(fd_ >= 0);
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
      FUZZ_CHECK(n > 0);
      done += static_cast<size_t>(n);
    }
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

}  // namespace kbench::fuzz

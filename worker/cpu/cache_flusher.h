// Evicts the host's caches before a COLD sample by writing a buffer of twice the last-level cache,
// split over every usable thread: one core's writes would leave the other cores' private caches
// (and, on a non-inclusive LLC, the lines they hold) untouched, and a multi-threaded variant reads
// its inputs from all of them. The threads live as long as the flusher and sleep between flushes.
#pragma once

#include <barrier>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace kbench::worker {

class CacheFlusher {
 public:
  // Allocates `bytes` (throws std::bad_alloc) and starts threads - 1 helpers.
  CacheFlusher(int64_t bytes, int threads);
  ~CacheFlusher();
  CacheFlusher(const CacheFlusher&) = delete;
  CacheFlusher& operator=(const CacheFlusher&) = delete;

  // Writes the whole buffer with a new byte value (so no write can be skipped); returns when done.
  void Flush();

  int64_t bytes() const { return bytes_; }

 private:
  void WriteChunk(int index);

  struct FreeDeleter {
    void operator()(unsigned char* p) const;
  };
  const int64_t bytes_;
  const int threads_;
  std::unique_ptr<unsigned char, FreeDeleter> buffer_;
  unsigned char value_ = 0;  // Written by Flush() before the start barrier, read by helpers after it.
  bool stop_ = false;        // Same.
  std::barrier<> start_, done_;
  std::vector<std::thread> helpers_;
};

}  // namespace kbench::worker

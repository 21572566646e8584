#include "worker/cpu/cache_flusher.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace kbench::worker {

void CacheFlusher::FreeDeleter::operator()(unsigned char* p) const { std::free(p); }

CacheFlusher::CacheFlusher(int64_t bytes, int threads)
    : bytes_((std::max<int64_t>(bytes, 64) + 63) / 64 * 64),
      threads_(std::max(1, threads)),
      start_(threads_),
      done_(threads_) {
  auto* p = static_cast<unsigned char*>(std::aligned_alloc(64, static_cast<size_t>(bytes_)));
  if (p == nullptr) throw std::bad_alloc();
  buffer_.reset(p);
  for (int t = 1; t < threads_; ++t)
    helpers_.emplace_back([this, t] {
      while (true) {
        start_.arrive_and_wait();
        if (stop_) return;
        WriteChunk(t);
        done_.arrive_and_wait();
      }
    });
}

CacheFlusher::~CacheFlusher() {
  stop_ = true;
  start_.arrive_and_wait();
  for (auto& t : helpers_) t.join();
}

void CacheFlusher::WriteChunk(int index) {
  const int64_t chunk = (bytes_ / threads_ + 63) / 64 * 64;
  const int64_t begin = std::min(bytes_, chunk * index);
  const int64_t end = std::min(bytes_, begin + chunk);
  std::memset(buffer_.get() + begin, value_, static_cast<size_t>(end - begin));
}

void CacheFlusher::Flush() {
  ++value_;
  start_.arrive_and_wait();
  WriteChunk(0);
  done_.arrive_and_wait();
}

}  // namespace kbench::worker

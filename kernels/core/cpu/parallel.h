// ParallelFor: the one threading helper of the CPU variants. Splits [0, n) into contiguous chunks,
// one per hardware thread, and runs them on std::threads started for the call. No pool: nothing
// global to tear down, and the start-up cost (tens of microseconds) stays visible on small problems,
// which is part of what the CPU ladder shows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace kbench::kernels::cpu {

inline int HardwareThreads() {
  static const int n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return n;
}

// Calls body(begin, end) on disjoint chunks that cover [0, n) exactly once. Uses at most
// HardwareThreads() chunks and none shorter than min_chunk (so tiny problems stay on the calling
// thread); the calling thread runs the first chunk itself. body must not throw.
template <class Body>
void ParallelFor(int64_t n, int64_t min_chunk, Body&& body) {
  if (n <= 0) return;
  const int64_t by_size = std::max<int64_t>(1, n / std::max<int64_t>(1, min_chunk));
  const int64_t chunks = std::min<int64_t>(HardwareThreads(), by_size);
  if (chunks == 1) {
    body(int64_t{0}, n);
    return;
  }
  // Balanced split: the first n % chunks chunks get one extra element.
  const int64_t base = n / chunks, extra = n % chunks;
  const auto begin_of = [&](int64_t c) { return c * base + std::min(c, extra); };
  std::vector<std::jthread> threads;
  threads.reserve(static_cast<size_t>(chunks - 1));
  for (int64_t c = 1; c < chunks; ++c)
    threads.emplace_back([&body, b = begin_of(c), e = begin_of(c + 1)] { body(b, e); });
  body(begin_of(0), begin_of(1));
}  // jthreads join here.

}  // namespace kbench::kernels::cpu

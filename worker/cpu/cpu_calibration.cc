#include "worker/cpu/cpu_calibration.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "worker/calibration_cache.h"
#include "worker/calibration_check.h"
#include "worker/measure/harness.h"

namespace kbench::worker {
namespace {

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<char, FreeDeleter>;

Buffer Allocate(int64_t bytes) {
  auto* p = static_cast<char*>(std::aligned_alloc(64, static_cast<size_t>((bytes + 63) / 64 * 64)));
  if (p == nullptr) throw std::bad_alloc();
  return Buffer(p);
}

// Runs body(thread) on `threads` threads (the caller is thread 0) and returns the duration of each
// of the `reps` phases that body separates with sync.arrive_and_wait(). body must call it reps + 1
// times: once after its set-up, then once after each repetition.
template <class Body>
std::vector<int64_t> PhaseNs(int threads, int reps, Body body) {
  std::vector<int64_t> stamps;
  stamps.reserve(static_cast<size_t>(reps) + 1);
  std::barrier sync(threads, [&stamps]() noexcept { stamps.push_back(SteadyNowNs()); });
  {
    std::vector<std::jthread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back([&, t] { body(t, sync); });
    body(0, sync);
  }
  std::vector<int64_t> phases;
  for (size_t i = 1; i < stamps.size(); ++i) phases.push_back(std::max<int64_t>(stamps[i] - stamps[i - 1], 1));
  return phases;
}

int64_t Best(const std::vector<int64_t>& phases) { return *std::min_element(phases.begin(), phases.end()); }

// Busy and total clock ticks of all cores, from /proc/stat's first line; nullopt when unreadable.
std::optional<std::pair<double, double>> HostTicks() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  double user, nice, system, idle, iowait, irq, softirq, steal;
  if (!(in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || cpu != "cpu")
    return std::nullopt;
  const double busy = user + nice + system + irq + softirq;
  return std::make_pair(busy, busy + idle + iowait + steal);
}

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

typedef float V4 __attribute__((vector_size(16)));
typedef float V8 __attribute__((vector_size(32)));
typedef float V16 __attribute__((vector_size(64)));

// kChains independent accumulators, so the FMA units never wait on their own latency (4 cycles x
// 2 ports needs at least 8 chains). Multiplier just under 1 keeps the values finite and normal.
template <class V, int kChains>
[[gnu::always_inline]] inline float FmaChains(int64_t iterations, float seed) {
  V acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = V{} + (seed + 1e-3f * static_cast<float>(c));
  const V a = V{} + 0.9999999f, b = V{} + 1e-7f;
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * a + b;
  }
  float sum = 0;
  for (int c = 0; c < kChains; ++c)
    for (size_t l = 0; l < sizeof(V) / sizeof(float); ++l) sum += acc[c][l];
  return sum;
}

struct FmaKernel {
  float (*fn)(int64_t, float);
  const char* isa;
  int lanes, chains;
};

float FmaGeneric(int64_t n, float s) { return FmaChains<V4, 8>(n, s); }
#if defined(__x86_64__)
// Compiled for the wider ISAs and chosen at run time, so the peak is the host's even though the
// binary targets baseline x86-64. Chains fit the register file: 12 of 32 zmm, 10 of 16 ymm.
[[gnu::target("avx512f")]] float FmaAvx512(int64_t n, float s) { return FmaChains<V16, 12>(n, s); }
[[gnu::target("avx2,fma")]] float FmaAvx2(int64_t n, float s) { return FmaChains<V8, 10>(n, s); }
#endif

FmaKernel SelectFmaKernel() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {FmaAvx512, "avx512f", 16, 12};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {FmaAvx2, "avx2+fma", 8, 10};
#endif
  return {FmaGeneric, "generic", 4, 8};
}

}  // namespace

CopyMeasurement MeasureCopy(int threads, int64_t buffer_bytes, int reps) {
  threads = std::max(1, threads);
  Buffer src = Allocate(buffer_bytes), dst = Allocate(buffer_bytes);
  const int64_t chunk = (buffer_bytes / threads + 63) / 64 * 64;
  const std::vector<int64_t> phases = PhaseNs(threads, reps, [&](int t, auto& sync) {
    const int64_t begin = std::min(buffer_bytes, chunk * t);
    const int64_t len = std::min(buffer_bytes, begin + chunk) - begin;
    // First touch by the thread that copies the chunk: its pages land on that thread's NUMA node.
    std::memset(src.get() + begin, 1, static_cast<size_t>(len));
    std::memset(dst.get() + begin, 0, static_cast<size_t>(len));
    sync.arrive_and_wait();
    for (int r = 0; r < reps; ++r) {
      std::memcpy(dst.get() + begin, src.get() + begin, static_cast<size_t>(len));
      sync.arrive_and_wait();
    }
  });
  std::vector<double> times(phases.begin(), phases.end());
  return {.bytes_per_second = 2.0 * static_cast<double>(buffer_bytes) / (static_cast<double>(Best(phases)) * 1e-9),
          .buffer_bytes = buffer_bytes,
          .reps = reps,
          .spread_fraction = SpreadFraction(std::move(times))};
}

StreamMeasurement MeasureStreams(int threads, int64_t buffer_bytes, int reps) {
  threads = std::max(1, threads);
  const int64_t floats = buffer_bytes / 4 / 16 * 16;
  buffer_bytes = floats * 4;
  Buffer a = Allocate(buffer_bytes), b = Allocate(buffer_bytes), c = Allocate(buffer_bytes);
  const int64_t chunk = (floats / threads + 15) / 16 * 16;
  std::vector<double> sinks(static_cast<size_t>(threads) * 8);  // one cache line each
  StreamMeasurement out{.buffer_bytes = buffer_bytes, .reps = reps};
  // kind 0: read (sum), 1: write (fill), 2: 2 reads : 1 write (c = a + b).
  auto run = [&](int kind) {
    const std::vector<int64_t> phases = PhaseNs(threads, reps, [&](int t, auto& sync) {
      const int64_t begin = std::min(floats, chunk * t), end = std::min(floats, begin + chunk);
      auto* fa = reinterpret_cast<float*>(a.get());
      auto* fb = reinterpret_cast<float*>(b.get());
      auto* fc = reinterpret_cast<float*>(c.get());
      // First touch by the thread that streams the chunk: its pages land on that thread's NUMA node.
      for (int64_t i = begin; i < end; ++i) fa[i] = 1.0f, fb[i] = 2.0f, fc[i] = 0.0f;
      sync.arrive_and_wait();
      for (int r = 0; r < reps; ++r) {
        if (kind == 0) {
          float acc[16] = {};
          for (int64_t i = begin; i < end; i += 16)
            for (int l = 0; l < 16; ++l) acc[l] += fa[i + l];
          for (float v : acc) sinks[static_cast<size_t>(t) * 8] += v;
        } else if (kind == 1) {
          const float v = static_cast<float>(r);
          for (int64_t i = begin; i < end; ++i) fc[i] = v;
        } else {
          for (int64_t i = begin; i < end; ++i) fc[i] = fa[i] + fb[i];
        }
        sync.arrive_and_wait();
      }
    });
    std::vector<double> times(phases.begin(), phases.end());
    out.spread_fraction = std::max(out.spread_fraction, SpreadFraction(std::move(times)));
    return static_cast<double>(buffer_bytes) / (static_cast<double>(Best(phases)) * 1e-9);
  };
  out.read_bytes_per_second = run(0);
  out.write_bytes_per_second = run(1);
  out.read2_write1_bytes_per_second = 3 * run(2);
  return out;
}

FmaMeasurement MeasureFma(int threads, int64_t iterations, int reps) {
  threads = std::max(1, threads);
  const FmaKernel k = SelectFmaKernel();
  std::vector<float> sink(static_cast<size_t>(threads) * 16);  // one cache line each
  const int64_t best = Best(PhaseNs(threads, reps, [&](int t, auto& sync) {
    sync.arrive_and_wait();
    for (int r = 0; r < reps; ++r) {
      sink[static_cast<size_t>(t) * 16] += k.fn(iterations, static_cast<float>(r + t));
      sync.arrive_and_wait();
    }
  }));
  const double flops = 2.0 * static_cast<double>(threads) * static_cast<double>(iterations) * k.lanes * k.chains;
  return {.flops_per_second = flops / (static_cast<double>(best) * 1e-9),
          .isa = k.isa,
          .lanes = k.lanes,
          .chains = k.chains,
          .reps = reps};
}

double OtherLoadDuring(const std::function<void()>& measure) {
  const auto ticks0 = HostTicks();
  const double own0 = ProcessCpuSeconds();
  measure();
  const double own = ProcessCpuSeconds() - own0;
  const auto ticks1 = HostTicks();
  if (!ticks0 || !ticks1) return 0;
  const double total = ticks1->second - ticks0->second, busy = ticks1->first - ticks0->first;
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (total <= 0 || hz <= 0) return 0;
  return std::clamp((busy - own * hz) / total, 0.0, 1.0);
}

absl::StatusOr<v1::Calibration> CalibrateCpu(const CpuCalibrationOptions& options, const std::string& device_uuid) {
  // Quick: capped at 256 MiB, as some hosts report a last-level cache of hundreds of MiB.
  const int64_t buffer = options.quick ? std::clamp<int64_t>(4 * options.llc_bytes, int64_t{32} << 20, int64_t{256} << 20)
                                       : std::max<int64_t>(4 * options.llc_bytes, int64_t{128} << 20);
  CopyMeasurement copy;
  StreamMeasurement streams;
  FmaMeasurement fma;
  double other_load = 0;
  try {
    other_load = OtherLoadDuring([&] {
      copy = MeasureCopy(options.threads, buffer, options.quick ? 5 : 10);
      streams = MeasureStreams(options.threads, buffer, options.quick ? 5 : 10);
      fma = MeasureFma(options.threads, options.quick ? 1'000'000 : 20'000'000, options.quick ? 3 : 5);
    });
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrFormat("calibration could not allocate 3 x %d bytes", buffer));
  }
  v1::Calibration c;
  c.set_device_uuid(device_uuid);
  c.set_copy_bytes_per_second(copy.bytes_per_second);
  (*c.mutable_peak_flops_per_second())["f32"] = fma.flops_per_second;
  (*c.mutable_peak_flops_per_second())["bf16"] = fma.flops_per_second;
  c.set_copy_spread_fraction(copy.spread_fraction);
  // The 1:1 mix is the memcpy above (copy_bytes_per_second); there is no L2 or SFU ceiling here.
  c.set_read_bytes_per_second(streams.read_bytes_per_second);
  c.set_write_bytes_per_second(streams.write_bytes_per_second);
  c.set_read2_write1_bytes_per_second(streams.read2_write1_bytes_per_second);
  c.set_stream_spread_fraction(streams.spread_fraction);
  c.set_fma_f32_flops_per_second(fma.flops_per_second);
  c.set_other_load_fraction(other_load);
  c.set_measured_at_unix_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  c.set_method(absl::StrFormat(
      "%scopy: memcpy of 2 x %d MiB over %d threads, best of %d; streams: read, write, 2:1 (c = a + b) of f32 "
      "over the same buffers, best of %d; fma: %s, %d chains x %d lanes over %d threads, best of %d",
      options.quick ? absl::StrCat(kQuickCalibrationPrefix, " ") : "", copy.buffer_bytes >> 20, options.threads,
      copy.reps, streams.reps, fma.isa, fma.chains, fma.lanes, options.threads, fma.reps));
  return c;
}

}  // namespace kbench::worker

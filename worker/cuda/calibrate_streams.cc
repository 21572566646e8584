#include "worker/cuda/calibrate_streams.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "worker/cuda/calibrate_timer.h"
#include "worker/cuda/cuda_util.cuh"
#include "worker/cuda/stream_kernels.cuh"

namespace kbench::worker {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Each stream buffer: 1 GiB (256 MiB quick), never under 4x the L2, within an eighth of memory (three
// of them for 2:1), a multiple of 1 MiB.
size_t StreamBytes(const v1::DeviceInfo& d, bool quick) {
  size_t bytes = quick ? 256 * kMiB : 1024 * kMiB;
  bytes = std::max(bytes, 4 * static_cast<size_t>(d.l2_cache_bytes()));
  bytes = std::min(bytes, static_cast<size_t>(d.memory_bytes()) / 8);
  return std::max(bytes / kMiB, size_t{1}) * kMiB;
}

}  // namespace

absl::Status MeasureStreams(cudaStream_t stream, const v1::DeviceInfo& device, bool quick, v1::Calibration* cal,
                            std::string* method) {
  const int sms = device.multiprocessor_count();
  const int reps = quick ? 5 : 20;
  const size_t bytes = StreamBytes(device, quick);
  DeviceBuffer a, b, c, sink;
  KB_CUDA(cudaMalloc(&a.p, bytes));
  KB_CUDA(cudaMalloc(&b.p, bytes));
  KB_CUDA(cudaMalloc(&c.p, bytes));
  KB_CUDA(cudaMalloc(&sink.p, 64));
  KB_CUDA(FillRandom(stream, a.p, bytes / 4, 0, 23));
  KB_CUDA(FillRandom(stream, b.p, bytes / 4, 0, 29));
  int* isink = static_cast<int*>(sink.p);
  float* fsink = static_cast<float*>(sink.p);

  double last_spread = 0;
  // Units (bytes, FLOPs) per second of `launch`, doing `moved` a run; its spread in last_spread.
  auto rate = [&](double moved, double* out, auto launch) -> absl::Status {
    auto ms = MedianMs(stream, 3, reps, [&]() -> absl::Status {
      KB_CUDA(launch());
      return absl::OkStatus();
    }, &last_spread);
    if (!ms.ok()) return ms.status();
    *out = moved / (*ms * 1e-3);
    return absl::OkStatus();
  };
  // Each mix: the best of the launch shapes (the ceiling is what the device can do), and that
  // shape's spread.
  double read = 0, write = 0, copy = 0, triad = 0, spread[4] = {0, 0, 0, 0};
  const double n = static_cast<double>(bytes);
  auto best = [&](double moved, double* out, double* out_spread, auto launch) -> absl::Status {
    double r = 0;
    if (absl::Status s = rate(moved, &r, launch); !s.ok()) return s;
    if (r > *out) *out = r, *out_spread = last_spread;
    return absl::OkStatus();
  };
  for (int i = 0; i < kStreamShapes; ++i) {
    const StreamShape g = StreamShapeOf(i, sms, bytes);
    if (auto s = best(n, &read, &spread[0], [&] { return LaunchReadStream(stream, g, a.p, bytes, isink); }); !s.ok())
      return s;
    if (auto s = best(n, &write, &spread[1], [&] { return LaunchWriteStream(stream, g, c.p, bytes); }); !s.ok())
      return s;
    if (auto s = best(2 * n, &copy, &spread[2], [&] { return LaunchCopyStream(stream, g, a.p, c.p, bytes); });
        !s.ok())
      return s;
    if (auto s = best(3 * n, &triad, &spread[3],
                      [&] { return LaunchTriadStream(stream, g, a.p, b.p, c.p, bytes); });
        !s.ok())
      return s;
  }
  const double spread_max = *std::max_element(spread, spread + 4);
  cal->set_read_bytes_per_second(read);
  cal->set_write_bytes_per_second(write);
  cal->set_read_write_bytes_per_second(copy);
  cal->set_read2_write1_bytes_per_second(triad);
  cal->set_stream_spread_fraction(spread_max);

  // A quarter of the L2, read `passes` times in one launch: resident after the first pass.
  const size_t l2_bytes = std::max<size_t>(static_cast<size_t>(device.l2_cache_bytes()) / 4 / 4096 * 4096, 4096);
  const int passes = quick ? 16 : 64;
  double l2 = 0;
  if (auto s = rate(static_cast<double>(l2_bytes) * passes, &l2,
                    [&] { return LaunchL2ReadStream(stream, sms, a.p, l2_bytes, passes, isink); });
      !s.ok())
    return s;
  cal->set_l2_read_bytes_per_second(l2);

  const int fma_iterations = quick ? 2048 : 16384, sfu_iterations = quick ? 512 : 4096;
  const double lanes = kPeakChains * PeakThreads(sms);
  double fma = 0, sfu = 0;
  if (auto s = rate(2 * lanes * fma_iterations, &fma,
                    [&] { return LaunchFmaPeak(stream, sms, fma_iterations, fsink); });
      !s.ok())
    return s;
  if (auto s = rate(lanes * sfu_iterations, &sfu,
                    [&] { return LaunchSfuPeak(stream, sms, sfu_iterations, fsink); });
      !s.ok())
    return s;
  cal->set_fma_f32_flops_per_second(fma);
  cal->set_sfu_ops_per_second(sfu);
  absl::StrAppendFormat(method,
                        "; streams (own kernels, int4, best of %d blocks x 512, 2048 x 256, one access per thread): "
                        "read, write, 1:1, 2:1 over %d MiB buffers, median of %d; L2 read: %d KiB x %d passes "
                        "(ld.cg); f32 FMA %d chains x %d iterations; SFU ex2.approx %d chains x %d iterations",
                        4 * sms, static_cast<int>(bytes / kMiB), reps, static_cast<int>(l2_bytes >> 10), passes,
                        kPeakChains, fma_iterations, kPeakChains, sfu_iterations);
  return absl::OkStatus();
}

}  // namespace kbench::worker

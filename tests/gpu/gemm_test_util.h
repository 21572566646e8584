// The GEMM GPU tests' helpers (gemm_test.cc, gemm_ladder_test.cc): the op, its test problems, device
// buffers with guard bands, and one variant checked against the CPU reference.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/compare.h"
#include "core/random.h"
#include "core/registry.h"
#include "gemm/gemm/gemm.h"
#include "gpu_presence.h"
#include "gpu_test_util.h"
#include "gtest/gtest.h"

namespace kbench::kernels::testing {


constexpr size_t kGuardBytes = 256;
constexpr unsigned char kPoison = 0xFF;  // NaN in f32 and bf16

inline const OpDef& GemmOp() {
  const OpDef* op = BuiltinRegistry().Find("gemm");
  if (op == nullptr) throw std::runtime_error("gemm is not registered");
  return *op;
}

inline std::string CudaText(cudaError_t e) { return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")"; }

// The shapes every variant is checked on (dtype unspecified): the presets, then shapes that reach
// the rungs' edge paths.
inline std::vector<Problem> GemmProblems(const OpDef& op) {
  std::vector<Problem> problems;
  for (const char* name : {"small", "edge", "decode"})
    if (const Preset* preset = op.find_preset(name))
      problems.insert(problems.end(), preset->problems.begin(), preset->problems.end());
  const std::vector<std::vector<int64_t>> extra = {
      {256, 256, 256},    // whole tiles of every rung, several k tiles
      {257, 520, 1000},   // K and N multiples of 8 but of no tile: TMA zero fill at all three edges;
                          // 16 k tiles of 64 wrap every pipeline's stage ring several times
      {130, 136, 24},     // K shorter than one k tile of every rung
      {2048, 2560, 136},  // 160 wgmma tiles: persistent blocks take a second tile (132-SM parts)
      {64, 200, 4096},    // a decode-sized M with a long K and N = 200 (not a multiple of 64)
  };
  for (const auto& dims : extra) problems.push_back(MakeProblem(op, dims));
  return problems;
}

// Host inputs of one (problem, seed) and their CPU reference, computed once and shared by every
// variant (the decode shapes take seconds in double on the CPU).
struct Case {
  std::vector<unsigned char> a, b;
  std::vector<double> expected;
};

inline const Case& CaseFor(const OpDef& op, const Problem& p, uint64_t seed) {
  static std::map<std::string, std::unique_ptr<Case>> cache;
  const std::string key = p.label() + " seed " + std::to_string(seed);
  if (auto it = cache.find(key); it != cache.end()) return *it->second;
  auto c = std::make_unique<Case>();
  const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
  const size_t elem = static_cast<size_t>(DtypeBytes(p.dtype));
  c->a.assign(static_cast<size_t>(m * k) * elem + 16, 0);
  c->b.assign(static_cast<size_t>(k * n) * elem + 16, 0);
  const Tensor ta{c->a.data(), m * k, p.dtype}, tb{c->b.data(), k * n, p.dtype};
  // As the worker fills them: stream = input index, the spec's range.
  FillUniform(ta, seed, 0, op.tensors[0].init_lo, op.tensors[0].init_hi);
  FillUniform(tb, seed, 1, op.tensors[1].init_lo, op.tensors[1].init_hi);
  std::vector<std::vector<double>> out;
  const Tensor inputs[2] = {ta, tb};
  op.reference(p, inputs, out);
  c->expected = std::move(out.at(0));
  return *cache.emplace(key, std::move(c)).first->second;
}

// A device buffer with poisoned guard bands on both sides and its data `offset` bytes past a
// 256-byte boundary.
struct DeviceBuffer {
  void* base = nullptr;
  size_t start = 0, bytes = 0, total = 0;
  ~DeviceBuffer() {
    if (base) cudaFree(base);
  }
  void* data() const { return static_cast<unsigned char*>(base) + start; }
  cudaError_t Allocate(size_t n, size_t offset) {
    bytes = n;
    start = kGuardBytes + offset;
    total = start + bytes + kGuardBytes;
    if (const cudaError_t e = cudaMalloc(&base, total); e != cudaSuccess) return e;
    return cudaMemset(base, kPoison, total);
  }
  // Bytes outside [start, start + bytes) that are no longer poison: stray writes.
  size_t GuardDamage(std::string* error) const {
    std::vector<unsigned char> all(total);
    if (const cudaError_t e = cudaMemcpy(all.data(), base, total, cudaMemcpyDeviceToHost); e != cudaSuccess) {
      *error = "cudaMemcpy (guards): " + CudaText(e);
      return 0;
    }
    size_t bad = 0;
    for (size_t i = 0; i < total; ++i)
      if ((i < start || i >= start + bytes) && all[i] != kPoison) ++bad;
    return bad;
  }
};

// After a failed synchronization: whether the context is gone (a fault in a kernel).
inline bool ContextLost() { return cudaDeviceSynchronize() != cudaSuccess; }

// First wrong elements, by (row, col), for the failure message.
inline std::string DescribeMismatches(const std::vector<double>& got, const std::vector<double>& want, int64_t n, Tolerance tol) {
  std::ostringstream s;
  int listed = 0;
  int64_t wrong_rows_min = -1, wrong_rows_max = -1, wrong_cols_min = -1, wrong_cols_max = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool bad = !std::isfinite(got[i]) || !(std::fabs(got[i] - want[i]) <= tol.atol + tol.rtol * std::fabs(want[i]));
    if (!bad) continue;
    const int64_t row = static_cast<int64_t>(i) / n, col = static_cast<int64_t>(i) % n;
    wrong_rows_min = wrong_rows_min < 0 ? row : std::min(wrong_rows_min, row);
    wrong_rows_max = std::max(wrong_rows_max, row);
    wrong_cols_min = wrong_cols_min < 0 ? col : std::min(wrong_cols_min, col);
    wrong_cols_max = std::max(wrong_cols_max, col);
    if (listed < 8) {
      s << "\n    C[" << row << "][" << col << "] = " << got[i] << ", expected " << want[i];
      ++listed;
    }
  }
  if (wrong_rows_min >= 0)
    s << "\n    wrong elements span rows " << wrong_rows_min << ".." << wrong_rows_max << ", columns " << wrong_cols_min
      << ".." << wrong_cols_max;
  return s.str();
}

struct RunResult {
  bool ran = false;
  std::string skipped;
  std::string failure;
};

// Runs one variant on one (problem, dtype, seed, offset) and checks C, the guard bands and the inputs.
inline RunResult CheckVariant(const OpDef& op, const Variant& v, const Problem& p, uint64_t seed, int offset_elems) {
  RunResult r;
  std::ostringstream what;
  what << v.name << " on " << p.label() << " (M x N x K), seed " << seed
       << (offset_elems ? ", tensors one element past a 256-byte boundary" : "");
  if (v.skip_reason) {
    r.skipped = v.skip_reason(p);
    if (!r.skipped.empty()) return r;
  }
  if (!FirstFatalError().empty()) {
    r.failure = what.str() + ": not run, the CUDA context was lost earlier: " + FirstFatalError();
    return r;
  }
  const auto fail = [&](const std::string& msg) {
    r.failure = what.str() + ": " + msg;
    return r;
  };
  const Case& c = CaseFor(op, p, seed);
  const int64_t m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
  const size_t elem = static_cast<size_t>(DtypeBytes(p.dtype));
  const size_t offset = static_cast<size_t>(offset_elems) * elem;
  DeviceBuffer a, b, out;
  if (cudaError_t e = a.Allocate(static_cast<size_t>(m * k) * elem, offset); e != cudaSuccess) return fail("cudaMalloc A: " + CudaText(e));
  if (cudaError_t e = b.Allocate(static_cast<size_t>(k * n) * elem, offset); e != cudaSuccess) return fail("cudaMalloc B: " + CudaText(e));
  if (cudaError_t e = out.Allocate(static_cast<size_t>(m * n) * elem, offset); e != cudaSuccess) return fail("cudaMalloc C: " + CudaText(e));
  if (a.bytes && cudaMemcpy(a.data(), c.a.data(), a.bytes, cudaMemcpyHostToDevice) != cudaSuccess) return fail("upload A");
  if (b.bytes && cudaMemcpy(b.data(), c.b.data(), b.bytes, cudaMemcpyHostToDevice) != cudaSuccess) return fail("upload B");
  const Tensor tensors[3] = {{a.data(), m * k, p.dtype}, {b.data(), k * n, p.dtype}, {out.data(), m * n, p.dtype}};
  // The poison memsets and the uploads' DMA are queued on the legacy stream, which the non-blocking
  // stream below does not wait for: C's poison could otherwise land on top of a small kernel's
  // output (seen once: the last 3 columns of a 1x4099x257 GEMV read back as NaN).
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return fail("cudaDeviceSynchronize (setup): " + CudaText(e));

  cudaStream_t stream = nullptr;
  if (cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); e != cudaSuccess)
    return fail("cudaStreamCreate: " + CudaText(e));
  const int rc = v.run_cuda(p, tensors, stream);
  const cudaError_t sync = cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  r.ran = true;
  if (rc != 0 || sync != cudaSuccess) {
    std::string msg = rc != 0 ? "run_cuda returned " + CudaText(static_cast<cudaError_t>(rc))
                              : "cudaStreamSynchronize after run_cuda: " + CudaText(sync);
    if (ContextLost() && FirstFatalError().empty()) FirstFatalError() = what.str() + ": " + msg;
    return fail(msg);
  }

  std::vector<unsigned char> raw(out.bytes);
  if (out.bytes && cudaMemcpy(raw.data(), out.data(), out.bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
    return fail("download C");
  std::vector<double> got(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m * n; ++i) got[i] = LoadAsDouble(raw.data(), p.dtype, i);
  const Tolerance tol = ToleranceFor(op, p);
  const CompareResult cmp = Compare(got, c.expected, tol);
  std::ostringstream report;
  if (!cmp.passed) {
    report << "\n  C: " << cmp.mismatches << " of " << m * n << " elements outside tolerance (rtol " << tol.rtol
           << ", atol " << tol.atol << "), " << cmp.non_finite << " NaN/inf (an unwritten element stays NaN), max abs "
           << cmp.max_abs_error << ", max rel " << cmp.max_rel_error << ", rel L2 " << cmp.rel_l2_error
           << DescribeMismatches(got, c.expected, n, tol);
  }
  std::string error;
  for (const auto& [name, buf] : {std::pair<const char*, const DeviceBuffer*>{"A", &a}, {"B", &b}, {"C", &out}}) {
    if (const size_t bad = buf->GuardDamage(&error); bad > 0)
      report << "\n  " << bad << " byte(s) written in the guard bands around " << name;
  }
  if (!error.empty()) report << "\n  " << error;
  // The inputs must come back unchanged.
  for (const auto& [name, buf, host] :
       {std::tuple<const char*, const DeviceBuffer*, const std::vector<unsigned char>*>{"A", &a, &c.a}, {"B", &b, &c.b}}) {
    std::vector<unsigned char> back(buf->bytes);
    if (buf->bytes && cudaMemcpy(back.data(), buf->data(), buf->bytes, cudaMemcpyDeviceToHost) == cudaSuccess &&
        std::memcmp(back.data(), host->data(), buf->bytes) != 0)
      report << "\n  input " << name << " was modified";
  }
  if (!report.str().empty()) r.failure = what.str() + ":" + report.str();
  return r;
}

inline std::vector<const Variant*> GemmCudaVariants() {
  std::vector<const Variant*> out;
  for (const Variant& v : GemmOp().variants)
    if (v.backend == Backend::kCuda && v.triton_source.empty()) out.push_back(&v);  // triton_gemm: triton_gpu_test
  return out;
}

inline std::string VariantName(const ::testing::TestParamInfo<const Variant*>& info) { return info.param->name; }

}  // namespace kbench::kernels::testing

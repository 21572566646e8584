#include "worker/custom/contract.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "worker/runner/convert.h"

namespace kbench::worker {
namespace {

// How an op's custom kernel is launched by default, and the body of its starting template (the
// signature is generated). The bodies are correct, simple kernels: a test compiles every one with
// NVRTC, and the GPU test measures them against the references.
struct LaunchRule {
  std::vector<uint32_t> block;
  std::vector<std::string> grid;
  std::string notes;
  std::string body;
  bool uses_block_reduce = false;
};

constexpr char kBlockReduce[] = R"(// Sum (or max) over the block; blockDim.x must be a multiple of 32 and blockDim.y == blockDim.z == 1.
__device__ float block_reduce(float v, bool is_max) {
  __shared__ float partial[32];
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  __syncthreads();  // the previous call's readers are done with partial[]
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) / 32;
  v = (int)(threadIdx.x % 32) < warps ? partial[threadIdx.x % 32] : (is_max ? -INFINITY : 0.0f);
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  return v;
}

)";

const std::map<std::string, LaunchRule>& Rules() {
  static const auto* rules = new std::map<std::string, LaunchRule>{
      {"vector_add",
       {{256, 1, 1}, {"cdiv(N, block_x)", "1", "1"}, "One thread per element by default.",
        R"(  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) out[i] = kbench_from_float(kbench_to_float(x[i]) + kbench_to_float(y[i]));
)"}},
      {"silu_mul_bias",
       {{256, 1, 1}, {"cdiv(rows * cols, block_x)", "1", "1"}, "One thread per element by default.",
        R"(  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  const float z = kbench_to_float(x[i]) + kbench_to_float(b[i % cols]);
  out[i] = kbench_from_float(z / (1.0f + expf(-z)) * kbench_to_float(y[i]));
)"}},
      {"reduce_sum",
       {{1024, 1, 1}, {"1", "1", "1"},
        "out is poisoned, not zeroed, and is not reset between timed launches: write it, never accumulate "
        "into it. The default is one block; a multi-block kernel must combine its partial sums without "
        "relying on out's previous value.",
        R"(  float s = 0.0f;
  for (long long i = threadIdx.x; i < N; i += blockDim.x) s += kbench_to_float(x[i]);
  s = block_reduce(s, false);
  if (threadIdx.x == 0) out[0] = s;
)",
        true}},
      {"rmsnorm",
       {{256, 1, 1}, {"rows", "1", "1"}, "One block per row by default.",
        R"(  const long long r = blockIdx.x;
  const kbench_t* row = x + r * cols;
  float ss = 0.0f;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = kbench_to_float(row[c]);
    ss += v * v;
  }
  const float inv = rsqrtf(block_reduce(ss, false) / (float)cols + 1e-6f);
  for (long long c = threadIdx.x; c < cols; c += blockDim.x)
    out[r * cols + c] = kbench_from_float(kbench_to_float(row[c]) * inv * kbench_to_float(weight[c]));
)",
        true}},
      {"softmax",
       {{256, 1, 1}, {"rows", "1", "1"}, "One block per row by default.",
        R"(  const long long r = blockIdx.x;
  const kbench_t* row = x + r * cols;
  float m = -INFINITY;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, kbench_to_float(row[c]));
  m = block_reduce(m, true);
  float s = 0.0f;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) s += expf(kbench_to_float(row[c]) - m);
  const float inv = 1.0f / block_reduce(s, false);
  for (long long c = threadIdx.x; c < cols; c += blockDim.x)
    out[r * cols + c] = kbench_from_float(expf(kbench_to_float(row[c]) - m) * inv);
)",
        true}},
      {"layernorm",
       {{256, 1, 1}, {"rows", "1", "1"}, "One block per row by default.",
        R"(  const long long r = blockIdx.x;
  const kbench_t* row = x + r * cols;
  float s = 0.0f;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) s += kbench_to_float(row[c]);
  const float mean = block_reduce(s, false) / (float)cols;
  float sq = 0.0f;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = kbench_to_float(row[c]) - mean;
    sq += d * d;
  }
  const float inv = rsqrtf(block_reduce(sq, false) / (float)cols + 1e-5f);
  for (long long c = threadIdx.x; c < cols; c += blockDim.x)
    out[r * cols + c] = kbench_from_float((kbench_to_float(row[c]) - mean) * inv * kbench_to_float(gamma[c]) +
                                          kbench_to_float(beta[c]));
)",
        true}},
      {"add_rmsnorm",
       {{256, 1, 1}, {"rows", "1", "1"}, "One block per row by default.",
        R"(  const long long r = blockIdx.x;
  float ss = 0.0f;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) {
    const long long i = r * cols + c;
    const kbench_t sum = kbench_from_float(kbench_to_float(x[i]) + kbench_to_float(residual[i]));
    residual_out[i] = sum;  // rounded to the dtype, as the reference rounds it
    const float v = kbench_to_float(sum);
    ss += v * v;
  }
  const float inv = rsqrtf(block_reduce(ss, false) / (float)cols + 1e-6f);
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) {
    const long long i = r * cols + c;  // this thread wrote residual_out[i] above
    out[i] = kbench_from_float(kbench_to_float(residual_out[i]) * inv * kbench_to_float(weight[c]));
  }
)",
        true}},
      {"gemm",
       {{16, 16, 1}, {"cdiv(N, block_x)", "cdiv(M, block_y)", "1"},
        "One thread per element of C by default (x: columns, y: rows); C is overwritten, not accumulated.",
        R"(  const long long col = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long row = (long long)blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (long long k = 0; k < K; ++k) acc += kbench_to_float(A[row * K + k]) * kbench_to_float(B[k * N + col]);
  C[row * N + col] = kbench_from_float(acc);
)"}},
  };
  return *rules;
}

std::string CType(const v1::ContractParam& p) {
  if (p.kind() == v1::ContractParam::DIM) return "long long";
  const std::string elem = p.fixed_dtype() == v1::DTYPE_F32    ? "float"
                           : p.fixed_dtype() == v1::DTYPE_BF16 ? "__nv_bfloat16"
                                                               : "kbench_t";
  return absl::StrCat(p.kind() == v1::ContractParam::INPUT ? "const " : "", elem, "*");
}

constexpr char kCommonNotes[] =
    "Parameters: the op's tensors in the order listed (device pointers to dense, row-major arrays from "
    "cudaMalloc), then the op's dims as 64-bit integers. kbench_t is the problem's dtype: float for f32, "
    "__nv_bfloat16 for bf16; CUDA source is compiled once per dtype with KBENCH_DTYPE_F32 or "
    "KBENCH_DTYPE_BF16 defined, and kbench_to_float / kbench_from_float convert (kbench_contract.h is "
    "pre-included). Declare the entry extern \"C\" (or it is found by its C++ name). One launch per "
    "sample on the job's stream, with the block, grid and dynamic shared memory of the job (defaults "
    "below); a grid dimension that evaluates to 0 launches nothing. Outputs are filled with 0xFF bytes "
    "(NaN) before each correctness trial and are not reset between timed launches, so every output "
    "element must be written. The kernel must not allocate or synchronize the device. A fault, an "
    "out-of-bounds access or a hang costs this result only (RUNTIME_ERROR or TIMEOUT).";

}  // namespace

std::optional<v1::LaunchContract> MakeLaunchContract(const kernels::OpDef& op) {
  auto rule = Rules().find(op.name);
  if (rule == Rules().end()) return std::nullopt;
  v1::LaunchContract c;
  c.set_entry(absl::StrCat("kbench_", op.name));
  for (const kernels::TensorSpec& t : op.tensors) {
    v1::ContractParam* p = c.add_params();
    p->set_name(t.name);
    p->set_kind(t.is_output ? v1::ContractParam::OUTPUT : v1::ContractParam::INPUT);
    for (const auto& d : t.dims) p->add_dims(d);
    p->set_fixed_dtype(ToProtoDtype(t.fixed_dtype));
    p->set_size_bytes(8);
  }
  for (const std::string& d : op.dims) {
    v1::ContractParam* p = c.add_params();
    p->set_name(d);
    p->set_kind(v1::ContractParam::DIM);
    p->set_size_bytes(8);
  }
  for (v1::ContractParam& p : *c.mutable_params()) p.set_c_type(CType(p));
  for (uint32_t b : rule->second.block) c.add_default_block(b);
  for (const auto& g : rule->second.grid) c.add_default_grid(g);
  for (kernels::Dtype d : op.dtypes) c.add_dtypes(ToProtoDtype(d));
  c.set_notes(absl::StrCat(op.description, "\n", rule->second.notes, " ", kCommonNotes));

  std::string tmpl = absl::StrCat(
      "// Starting template of a custom ", op.name, " kernel for kbench (", c.entry(), ").\n",
      "// Default launch: block (", absl::StrJoin(c.default_block(), ", "), "), grid (",
      absl::StrJoin(c.default_grid(), ", "), ").\n",
      "// Submit: kbench-client submit --op ", op.name, " --source THIS_FILE --wait\n\n");
  if (rule->second.uses_block_reduce) tmpl += kBlockReduce;
  tmpl += absl::StrCat("extern \"C\" __global__ ", ContractSignature(c, c.entry()), " {\n", rule->second.body, "}\n");
  c.set_template_source(std::move(tmpl));
  return c;
}

std::string ContractSignature(const v1::LaunchContract& contract, const std::string& entry) {
  return absl::StrCat("void ", entry, "(",
                      absl::StrJoin(contract.params(), ", ",
                                    [](std::string* o, const v1::ContractParam& p) {
                                      absl::StrAppend(o, p.c_type(), " ", p.name());
                                    }),
                      ")");
}

const std::string& ContractHeader() {
  static const std::string* header = new std::string(R"(// kbench_contract.h: pre-included in every custom kernel compile.
#pragma once
#if defined(KBENCH_DTYPE_BF16)
#if __has_include(<cuda_bf16.h>)
#include <cuda_bf16.h>
__device__ __forceinline__ float kbench_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ __nv_bfloat16 kbench_from_float(float v) { return __float2bfloat16_rn(v); }
#else
// No CUDA headers on this worker: bf16 as its bits, with the same conversions (round to nearest even).
struct __nv_bfloat16 { unsigned short x; };
__device__ __forceinline__ float kbench_to_float(__nv_bfloat16 v) { return __uint_as_float((unsigned)v.x << 16); }
__device__ __forceinline__ __nv_bfloat16 kbench_from_float(float f) {
  unsigned u = __float_as_uint(f);
  __nv_bfloat16 r;
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) { r.x = (unsigned short)((u >> 16) | 0x40); return r; }
  u += 0x7fffu + ((u >> 16) & 1u);
  r.x = (unsigned short)(u >> 16);
  return r;
}
#endif
typedef __nv_bfloat16 kbench_t;
#else
typedef float kbench_t;
__device__ __forceinline__ float kbench_from_float(float v) { return v; }
#endif
__device__ __forceinline__ float kbench_to_float(float v) { return v; }
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
)");
  return *header;
}

std::string ContractCheckSource(const v1::LaunchContract& contract, const std::string& entry) {
  const std::string sig = ContractSignature(contract, entry);
  const int n = contract.params_size();
  std::string s = absl::StrCat(R"(
#line 1 "kbench_contract_check"
namespace kbench_contract_check {
template <class F> struct fn { static constexpr int arity = -1; };
template <class... A> struct fn<void (*)(A...)> { static constexpr int arity = sizeof...(A); };
template <int I, class... A> struct at { typedef void type; };
template <class H, class... T> struct at<0, H, T...> { typedef H type; };
template <int I, class H, class... T> struct at<I, H, T...> { typedef typename at<I - 1, T...>::type type; };
template <int I, class F> struct param { typedef void type; };
template <int I, class... A> struct param<I, void (*)(A...)> { typedef typename at<I, A...>::type type; };
template <class T> struct ptr { static constexpr int size = -1; };
template <class T> struct ptr<T*> { static constexpr int size = (int)sizeof(T); };
template <class T> struct i64 { static constexpr bool is = false; };
template <> struct i64<long long> { static constexpr bool is = true; };
template <> struct i64<unsigned long long> { static constexpr bool is = true; };
template <> struct i64<long> { static constexpr bool is = sizeof(long) == 8; };
template <> struct i64<unsigned long> { static constexpr bool is = sizeof(unsigned long) == 8; };
typedef decltype(&)", entry, R"() F;
static_assert(fn<F>::arity == )", n, R"(, "kbench contract: the kernel must be )", sig,
                               " (a __global__ function with ", n, " parameters)\");\n");
  for (int i = 0; i < n; ++i) {
    const v1::ContractParam& p = contract.params(i);
    const std::string t = absl::StrCat("typename param<", i, ", F>::type");
    if (p.kind() == v1::ContractParam::DIM) {
      absl::StrAppend(&s, "static_assert(fn<F>::arity != ", n, " || i64<", t, ">::is, \"kbench contract: parameter ",
                      i + 1, " (", p.name(), ") must be a 64-bit integer (long long)\");\n");
    } else {
      const std::string elem = p.fixed_dtype() == v1::DTYPE_F32    ? "sizeof(float)"
                               : p.fixed_dtype() == v1::DTYPE_BF16 ? "2"
                                                                   : "sizeof(kbench_t)";
      absl::StrAppend(&s, "static_assert(fn<F>::arity != ", n, " || ptr<", t, ">::size == (int)", elem,
                      ", \"kbench contract: parameter ", i + 1, " (", p.name(), ") must be a pointer to ",
                      absl::StrReplaceAll(p.c_type(), {{"const ", ""}, {"*", ""}}),
                      " elements (a ", p.c_type(), ")\");\n");
    }
  }
  s += "}  // namespace kbench_contract_check\n";
  return s;
}

}  // namespace kbench::worker

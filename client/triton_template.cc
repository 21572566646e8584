// The Triton templates; see triton_template.h.
#include "client/triton_template.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kbench::client {
namespace {

constexpr char kHeader[] = R"PY(# A Triton kernel for kbench (kbench-client submit --op {OP} --source this_file.py).
# The worker compiles it with Triton for its GPU and measures it beside the op's ladder, checked
# against the op's reference. Rules (kbench-client kernels --op {OP} --contract):
# - the kernel's non-constexpr parameters are the contract's, in order: {PARAMS}
#   (tensors are dense and row-major; dims arrive as int64)
# - outputs are poisoned (NaN) before each check: write every element, never accumulate into them
# - `kbench_launch` below is read without running Python: literals only. "grid" and string constexprs
#   are expressions over the op's dims and the constexprs: + - * / %, cdiv, min, max, next_pow2
import triton
import triton.language as tl

)PY";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string Body(const std::string& op, const std::string& sig) {
  if (op == "vector_add")
    return absl::StrCat(R"PY(
@triton.jit
def my_vector_add()PY", sig, R"PY(, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    a = tl.load(x + offs, mask=mask).to(tl.float32)
    b = tl.load(y + offs, mask=mask).to(tl.float32)
    tl.store(out + offs, (a + b).to(out.dtype.element_ty), mask=mask)


kbench_launch = {
    "kernel": "my_vector_add",
    "grid": ["cdiv(N, BLOCK)"],
    "constexprs": {"BLOCK": 1024},
    "num_warps": 4,
}
)PY");
  if (op == "rmsnorm")
    return absl::StrCat(R"PY(
@triton.jit
def my_rmsnorm()PY", sig, R"PY(, BLOCK: tl.constexpr):
    # One program per row; BLOCK >= cols, so the row is one masked block.
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(v * v, axis=0) / cols + 1e-6)
    w = tl.load(weight + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + row * cols + offs, (v * rstd * w).to(out.dtype.element_ty), mask=mask)


kbench_launch = {
    "kernel": "my_rmsnorm",
    "grid": ["rows"],
    "constexprs": {"BLOCK": "next_pow2(cols)"},
    "num_warps": 8,
    "num_stages": 1,
}
)PY");
  if (op == "softmax")
    return absl::StrCat(R"PY(
@triton.jit
def my_softmax()PY", sig, R"PY(, BLOCK: tl.constexpr):
    # One program per row; BLOCK >= cols, so the row is one masked block.
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x + row * cols + offs, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(out + row * cols + offs, (e / tl.sum(e, axis=0)).to(out.dtype.element_ty), mask=mask)


kbench_launch = {
    "kernel": "my_softmax",
    "grid": ["rows"],
    "constexprs": {"BLOCK": "next_pow2(cols)"},
    "num_warps": 8,
    "num_stages": 1,
}
)PY");
  if (op == "layernorm")
    return absl::StrCat(R"PY(
@triton.jit
def my_layernorm()PY", sig, R"PY(, BLOCK: tl.constexpr):
    # One program per row; BLOCK >= cols, so the row is one masked block.
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / cols
    d = tl.where(mask, v - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / cols + 1e-5)
    g = tl.load(gamma + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(beta + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + row * cols + offs, (d * rstd * g + b).to(out.dtype.element_ty), mask=mask)


kbench_launch = {
    "kernel": "my_layernorm",
    "grid": ["rows"],
    "constexprs": {"BLOCK": "next_pow2(cols)"},
    "num_warps": 8,
    "num_stages": 1,
}
)PY");
  if (op == "gemm")
    return absl::StrCat(R"PY(
@triton.jit
def my_gemm()PY", sig, R"PY(, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # One program per BLOCK_M x BLOCK_N tile of C; tl.dot runs on the tensor cores.
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(A + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(B + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(C + rm[:, None] * N + rn[None, :], acc.to(C.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


kbench_launch = {
    "kernel": "my_gemm",
    "grid": ["cdiv(M, BLOCK_M)", "cdiv(N, BLOCK_N)"],
    "dtypes": ["bf16"],
    # Several configs: each is compiled and timed once per shape class, the fastest is measured.
    "configs": [
        {"constexprs": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, "num_warps": 8, "num_stages": 3},
        {"constexprs": {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, "num_warps": 4, "num_stages": 3},
    ],
}
)PY");
  return "";
}

}  // namespace

std::string TritonTemplate(const v1::OpInfo& op) {
  std::vector<std::string> names;
  for (const v1::ContractParam& p : op.contract().params()) names.push_back(p.name());
  const std::string sig = absl::StrJoin(names, ", ");
  std::string text = Replace(Replace(kHeader, "{OP}", op.name()), "{PARAMS}", sig);
  std::string body = Body(op.name(), sig);
  if (body.empty()) {
    body = absl::StrCat(R"PY(
@triton.jit
def my_)PY", op.name(), "(", sig, R"PY(, BLOCK: tl.constexpr):
    # Write the kernel here: this skeleton refuses to compile until then.
    tl.static_assert(False, "write the kernel")


kbench_launch = {
    "kernel": "my_)PY", op.name(), R"PY(",
    "grid": ["1"],
    "constexprs": {"BLOCK": 1024},
    "num_warps": 4,
}
)PY");
  }
  return text + body;
}

}  // namespace kbench::client

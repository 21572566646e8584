// The kernel suite: one line per op, in the order clients list them. Each line names the function
// its op's folder provides (<family>/<op>/<op>_op.cc), which returns the op with its CPU rungs and,
// in CUDA builds, the CUDA rungs its .cu files define. Adding an op is its folder and one line here.
#pragma once

// clang-format off
#define KBENCH_SUITE_OPS(X)                                    \
  X(MakeVectorAddOp)        /* elementwise/vector_add/    */     \
  X(MakeRmsnormOp)          /* reduction/rmsnorm/         */     \
  X(MakeSoftmaxOp)          /* reduction/softmax/         */     \
  X(MakeGemmOp)             /* gemm/gemm/                 */     \
  X(MakeSiluMulBiasOp)      /* elementwise/silu_mul_bias/ */     \
  X(MakeReduceSumOp)        /* reduction/reduce_sum/      */     \
  X(MakeLayernormOp)        /* reduction/layernorm/       */     \
  X(MakeAddRmsnormOp)       /* reduction/add_rmsnorm/     */     \
  X(MakePagedDecodeOp)      /* attention/paged_decode/    */     \
  X(MakeFp8QuantOp)         /* quant/fp8_quant/           */     \
  X(MakeSiluAndMulOp)       /* elementwise/silu_and_mul/  */     \
  X(MakeRmsnormFp8QuantOp)  /* quant/rmsnorm_fp8_quant/  */      \
  X(MakeSiluMulFp8QuantOp)  /* quant/silu_mul_fp8_quant/ */      \
  X(MakeRopeOp)             /* elementwise/rope/         */      \
  X(MakeW4a16GemmOp)        /* quant/w4a16_gemm/          */     \
  X(MakeFp8GemmOp)          /* quant/fp8_gemm/            */     \
  X(MakeFp8GemmBlockOp)     /* quant/fp8_gemm/ (block scales) */ \
  X(MakeAttentionOp)        /* attention/attention/       */     \
  X(MakeAttentionVarlenOp)  /* attention/attention_varlen/ */
// clang-format on

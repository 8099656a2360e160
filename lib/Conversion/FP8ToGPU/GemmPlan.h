//===- GemmPlan.h - The GEMM kernel a chip's lowering builds ----*- C++ -*-===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_GEMMPLAN_H
#define FP8_LIB_CONVERSION_FP8TOGPU_GEMMPLAN_H

#include "FP8/Conversion/FP8ToBlackwell/BlackwellGemm.h"
#include "FP8/Conversion/KernelSkeleton/GemmKernel.h"

namespace mlir::fp8 {

/// The GEMM kernel the lowering builds for an fp8.scaled_matmul: the
/// problem (with the operand majors sm_100a reads) and its tiling.
struct GemmKernelPlan {
  blackwell::BlackwellGemm gemm;
  GemmTiling tiling;
};

/// The kernel the lowering for `target` builds for `op`
/// (KernelContract.cpp), or a diagnostic on `op` saying why there is none.
FailureOr<GemmKernelPlan> planGemmKernel(ScaledMatmulOp op,
                                         const TargetInfo &target);

/// The same for an fp8.grouped_scaled_matmul.
FailureOr<GemmKernelPlan> planGroupedGemmKernel(GroupedScaledMatmulOp op,
                                                const TargetInfo &target);
/// Replaces such an `op` by the same GEMM with an f32 result (and its amax
/// for per-tensor current scaling) followed by the quantization of that
/// result (TwoPhaseFP8Result.cpp); returns the new GEMM.
FailureOr<ScaledMatmulOp> splitTwoPhaseFP8Result(ScaledMatmulOp op);

} // namespace mlir::fp8

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMMPLAN_H

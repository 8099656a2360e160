//===- HopperGemm.h - Warp-specialized FP8 GEMM for sm_90a ------*- C++ -*-===//

#ifndef FP8_CONVERSION_FP8TOHOPPER_HOPPERGEMM_H
#define FP8_CONVERSION_FP8TOHOPPER_HOPPERGEMM_H

#include "FP8/Conversion/FP8ToHopper/HopperTiling.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::fp8::hopper {

/// Builds the kernel `name` into `module`: a persistent, warp-specialized
/// TMA + wgmma GEMM (one producer warpgroup, tileM/64 consumer warpgroups).
gpu::GPUFuncOp buildGemmKernel(OpBuilder &builder, Location loc,
                               gpu::GPUModuleOp module, StringRef name,
                               const GemmProblem &problem,
                               const GemmTiling &tiling);

} // namespace mlir::fp8::hopper

#endif // FP8_CONVERSION_FP8TOHOPPER_HOPPERGEMM_H

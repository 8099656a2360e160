//===- BlackwellGemm.h - Warp-specialized FP8 GEMM for sm_100a --*- C++ -*-===//

#ifndef FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLGEMM_H
#define FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLGEMM_H

#include "FP8/Conversion/FP8ToBlackwell/BlackwellTiling.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::fp8::blackwell {

/// Builds the kernel `name` into `module`: a persistent, warp-specialized
/// TMA + tcgen05.mma GEMM (warp 0: TMA producer; warp 1: TMEM owner and MMA
/// issuer; warpgroups 1 and 2: epilogue, each half of the tile's columns).
gpu::GPUFuncOp buildGemmKernel(OpBuilder &builder, Location loc,
                               gpu::GPUModuleOp module, StringRef name,
                               const BlackwellGemm &gemm,
                               const GemmTiling &tiling);

} // namespace mlir::fp8::blackwell

#endif // FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLGEMM_H

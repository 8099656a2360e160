//===- DequantizeKernel.h - fp8.dequantize as a GPU kernel ------*- C++ -*-===//
//
// The kernel of `fp8.dequantize`: `y = decode(x) * scale_inv[block]` in f32,
// rounded to nearest even into bf16/f16 (or stored as f32), with the scales
// in the layouts the quantization kernels write (getScaleTensorLayout): so a
// quantize kernel's output, rowwise or a transposed columnwise one, goes
// back through this kernel unchanged. Runtime schema `"kind":
// "dequantize"`.
//
// The thread layout is the quantization kernels': one 256-thread CTA per
// 128x128 tile, each thread 8 consecutive columns (an 8-byte load, decoded
// pairwise by `cvt.rn.f16x2.{e4m3x2,e5m2x2}`, exact) of 8 rows.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_QUANTIZEKERNELS_DEQUANTIZEKERNEL_H
#define FP8_CONVERSION_QUANTIZEKERNELS_DEQUANTIZEKERNEL_H

#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Target/Chip.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <string>

namespace mlir::fp8 {

/// One dequantization kernel.
struct DequantizeProblem {
  /// `rows` is ShapedType::kDynamic when `dynamicRows`.
  int64_t rows = 0, cols = 0;
  /// R is a run-time value: the kernel takes it as a trailing i32 parameter
  /// `r` (metadata symbol kQuantizeRowsSymbol, bound from x's shape).
  bool dynamicRows = false;
  Type elementType; ///< f8E4M3FN or f8E5M2
  Type outputType;  ///< bf16, f16 or f32
  GranularityKind granularity = GranularityKind::Tensor;
  int64_t blockRows = 0, blockCols = 0; ///< tile/mx: 1x128, 128x128, 1x32

  /// The problem of `op`, or a diagnostic saying why no kernel takes it.
  static FailureOr<DequantizeProblem> get(DequantizeOp op);
};

/// `fp8_dequantize_<granularity>_<elem>_<out>_r<R>_c<C>`, with `rdyn` in
/// place of `r<R>` for a run-time R.
std::string getDequantizeKernelName(const DequantizeProblem &problem);

/// The metadata: operands `x` ([R, C] FP8), `scale_inv` (its
/// layout) and `y` ([R, C]), tiles grid over `y`; then the param `r` for a
/// run-time R (symbolic extents as the quantization kernels').
md::KernelMetadata
buildDequantizeKernelMetadata(StringRef name, const ChipInfo &chip,
                              const DequantizeProblem &problem);

/// Builds the kernel `name` into `module`.
gpu::GPUFuncOp buildDequantizeKernel(OpBuilder &builder, Location loc,
                                     gpu::GPUModuleOp module, StringRef name,
                                     const DequantizeProblem &problem);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_QUANTIZEKERNELS_DEQUANTIZEKERNEL_H

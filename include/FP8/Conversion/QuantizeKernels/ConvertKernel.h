//===- ConvertKernel.h - Element-type conversion as a GPU kernel -*- C++ -*-===//
//
// The kernel of a tensor `arith.truncf` from f32 to bf16 or f16 (round to
// nearest even, subnormals kept): what rounds the f32 partial sums of a
// parallel layer, reduced across devices in f32, once to the layer's type
// in the compiled host program (fp8-shard-linear's `f32-partials`).
// Runtime schema `"kind": "convert"`.
//
// The thread layout is the quantization kernels': one 256-thread CTA per
// 128x128 tile, each thread 8 consecutive columns (two 16-byte loads of
// f32, one 16-byte store) of 8 rows.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_QUANTIZEKERNELS_CONVERTKERNEL_H
#define FP8_CONVERSION_QUANTIZEKERNELS_CONVERTKERNEL_H

#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"
#include "FP8/Target/Chip.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <string>

namespace mlir::fp8 {

/// One conversion kernel: y [R, C] = x [R, C] rounded to y's type.
struct ConvertProblem {
  /// `rows` is ShapedType::kDynamic when `dynamicRows`.
  int64_t rows = 0, cols = 0;
  /// R is a run-time value: the kernel takes it as a trailing i32 parameter
  /// `r` (metadata symbol kQuantizeRowsSymbol, bound from x's shape).
  bool dynamicRows = false;
  Type inputType;  ///< f32
  Type outputType; ///< bf16 or f16

  /// Whether `op` is a conversion of tensors this family is meant for (a
  /// tensor arith.truncf from f32 to bf16 or f16); `get` then says whether
  /// a kernel takes it.
  static bool matches(arith::TruncFOp op);
  /// The problem of `op`, or a diagnostic saying why no kernel takes it.
  static FailureOr<ConvertProblem> get(arith::TruncFOp op);
};

/// `fp8_convert_<in>_<out>_r<R>_c<C>`, with `rdyn` in place of `r<R>` for a
/// run-time R.
std::string getConvertKernelName(const ConvertProblem &problem);

/// The metadata: operands `x` and `y` ([R, C] each), tiles grid over `y`;
/// then the param `r` for a run-time R.
md::KernelMetadata buildConvertKernelMetadata(StringRef name,
                                              const ChipInfo &chip,
                                              const ConvertProblem &problem);

/// Builds the kernel `name` into `module`.
gpu::GPUFuncOp buildConvertKernel(OpBuilder &builder, Location loc,
                                  gpu::GPUModuleOp module, StringRef name,
                                  const ConvertProblem &problem);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_QUANTIZEKERNELS_CONVERTKERNEL_H

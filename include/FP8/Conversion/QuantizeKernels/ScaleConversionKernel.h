//===- ScaleConversionKernel.h - Blockwise scales to MX atoms ---*- C++ -*-===//
//
// The kernel of `fp8.scales_to_mx`: the power-of-two blockwise scale_inv
// grid of an [R, C] operand written as the MX scales of the same data in
// the 128x4 UE8M0 atom layout the block-scaled GEMMs read (`[ceil(R/128),
// ceil(ceil(C/32)/4), 512]` bytes): byte (r % 32) * 16 + (r % 128) / 32 * 4
// + kb % 4 of atom (r / 128, kb / 4) holds the code of tile (r / Rt,
// kb * 32 / Kb), padding 0. Bit for bit what
// emulation::blockwiseScalesToMxAtoms computes (ScaleEmulation.h) for
// power-of-two scales in [2^-127, 2^127]; an f32's code is its exponent
// field. Runtime schema `"kind": "scales_to_mx"`.
//
// The grid is read in the layout every other kernel keeps it in: f32 1x128
// scales MN-major `[ceil(C/128), roundup(R, 4)]` and f32 128x128 scales
// row-major `[ceil(R/128), ceil(C/128)]`, as the quantization kernels write
// them and the Hopper GEMMs read them (getScaleTensorLayout); UE8M0 tile
// scales, which no kernel writes, row-major `[ceil(R/Rt), ceil(C/Kb)]`.
//
// One CTA of 128 threads per 128-row band of atoms: thread t writes row t's
// 32-bit word (its four 1x32 blocks) of every atom of the band.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_QUANTIZEKERNELS_SCALECONVERSIONKERNEL_H
#define FP8_CONVERSION_QUANTIZEKERNELS_SCALECONVERSIONKERNEL_H

#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Target/Chip.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <string>

namespace mlir::fp8 {

/// One scale conversion kernel.
struct ScalesToMXProblem {
  /// The operand's rows R; ShapedType::kDynamic when `dynamicRows` (1-row
  /// tiles only): a trailing i32 parameter, `r` (metadata symbol "R") for a
  /// row-major grid, `rp` (symbol "RP" = roundup(R, 4), the rows of an
  /// MN-major grid, which the kernel converts all of) for an MN-major one.
  int64_t rows = 0;
  bool dynamicRows = false;
  int64_t tileRows = 1, tileCols = 128; ///< Rt x Kb
  int64_t mxBlocks = 0;                 ///< ceil(C / 32)
  Type inputType;                       ///< f32 or f8E8M0FNU

  /// The grid is MN-major (f32 1x128 scales): element (r, j) at
  /// j * roundup(R, 4) + r.
  bool mnMajorGrid() const;

  /// Scale columns of the input grid: ceil(C / Kb).
  int64_t gridCols() const;
  /// Atoms along K: ceil(mxBlocks / 4).
  int64_t kGroups() const;

  /// The problem of `op`, or a diagnostic saying why no kernel takes it.
  static FailureOr<ScalesToMXProblem> get(ScalesToMXOp op);
};

/// `fp8_scales_to_mx_<f32|ue8m0>_<Rt>x<Kb>_r<R>_b<ceil(C/32)>`, with `rdyn`
/// in place of `r<R>` for a run-time R.
std::string getScalesToMXKernelName(const ScalesToMXProblem &problem);

/// The metadata: operands `scale_inv` (the grid in its layout,
/// `["R", ceil(C/Kb)]` or `[ceil(C/128), "RP"]` for a run-time R) and
/// `mx_scale_inv` (the atoms, ue8m0
/// `[ceil(R/128), ceil(ceil(C/32)/4), 512]`), then the param `r` / `rp`
/// for a run-time R; one CTA per 128 rows.
md::KernelMetadata
buildScalesToMXKernelMetadata(StringRef name, const ChipInfo &chip,
                              const ScalesToMXProblem &problem);

/// Builds the kernel `name` into `module`.
gpu::GPUFuncOp buildScalesToMXKernel(OpBuilder &builder, Location loc,
                                     gpu::GPUModuleOp module, StringRef name,
                                     const ScalesToMXProblem &problem);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_QUANTIZEKERNELS_SCALECONVERSIONKERNEL_H

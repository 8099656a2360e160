//===- KernelContract.h - What the kernels of a chip take -------*- C++ -*-===//
//
// The kernel part of the input contract (docs/contract.md): for each fp8 op,
// whether the lowering for a chip can build its kernel, checked the way the
// lowering itself checks it (the same functions), with no IR built. This is
// what fp8-verify-target runs, so that it rejects exactly what the lowerings
// would, before any of them runs.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOGPU_KERNELCONTRACT_H
#define FP8_CONVERSION_FP8TOGPU_KERNELCONTRACT_H

#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Target/Chip.h"

namespace mlir::fp8 {

/// The limits of the kernels an `fp8.linear` / `fp8.linear_backward` expands
/// into on `chip` (its recipe included), in the layer's terms (M the token
/// count, N the output and K the input features): checked on the layer op,
/// by fp8-expand-linear before it expands it.
LogicalResult verifyLinearKernelContract(Operation *op, const ChipInfo &chip);

/// Whether the grouped GEMM kernels of `chip` write an FP8 result of a
/// `layout` GEMM, quantized in their epilogue (`chip` null: no chip chosen
/// yet, any chip's kernels): the sm_90a m_contiguous and m_masked kernels
/// do; the k_grouped kernels and those of sm_100a write bf16, f16 or f32.
bool groupedKernelsWriteFP8Result(GroupedLayout layout, const ChipInfo *chip);

/// Whether they also compute the quantization `recipe` at `g` (with a given
/// per-tensor scale when `givenScale`) of that result: per tensor with a
/// given scale, or in 1x128 blocks along N (#fp8.blockwise). The others
/// take scales that reduce over more than one output tile.
bool groupedKernelsQuantizeResult(GroupedLayout layout, const ChipInfo *chip,
                                  RecipeAttrInterface recipe, GranularityAttr g,
                                  bool givenScale);

/// Whether the kernels for `target` take `op` (any fp8 op; others
/// succeed): the checks of the lowering that do not depend on what later
/// passes do to the op's neighbours. A diagnostic on `op` otherwise.
LogicalResult verifyKernelContract(Operation *op, const TargetInfo &target);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_FP8TOGPU_KERNELCONTRACT_H

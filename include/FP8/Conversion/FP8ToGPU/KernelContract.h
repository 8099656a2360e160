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

/// Whether the kernels for `target` take `op` (any fp8 op; others
/// succeed): the checks of the lowering that do not depend on what later
/// passes do to the op's neighbours. A diagnostic on `op` otherwise.
LogicalResult verifyKernelContract(Operation *op, const TargetInfo &target);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_FP8TOGPU_KERNELCONTRACT_H

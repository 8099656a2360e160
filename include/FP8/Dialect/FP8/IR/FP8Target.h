//===- FP8Target.h - The target a module is compiled for --------*- C++ -*-===//
//
// The `fp8.target` attribute of the top-level module (#fp8.target, set by
// fp8-attach-target) and the one accessor through which every pass reads
// the chip and its limits.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_DIALECT_FP8_IR_FP8TARGET_H
#define FP8_DIALECT_FP8_IR_FP8TARGET_H

#include "FP8/Dialect/FP8/IR/FP8Attrs.h"
#include "FP8/Target/Chip.h"

#include "mlir/IR/Operation.h"

namespace mlir::fp8 {

/// The discardable attribute of the top-level builtin.module holding its
/// #fp8.target.
inline constexpr llvm::StringLiteral kTargetAttrName = "fp8.target";

/// The #fp8.target of `target`'s values.
TargetAttr getTargetAttr(MLIRContext *context, const TargetInfo &target);

/// The #fp8.target of the module `op` belongs to: `op`'s own `fp8.target`
/// or that of its nearest ancestor carrying one; null when there is none.
TargetAttr lookupTarget(Operation *op);

/// The chip and limits of lookupTarget(op). Without a target, emits at
/// `op`'s location "no fp8.target on the module: run
/// fp8-attach-target{chip=...} (fp8-to-ptx does) first" and fails.
FailureOr<TargetInfo> getTarget(Operation *op);

} // namespace mlir::fp8

#endif // FP8_DIALECT_FP8_IR_FP8TARGET_H

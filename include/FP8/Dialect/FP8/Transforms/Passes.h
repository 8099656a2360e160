//===- Passes.h - FP8 dialect passes ----------------------------*- C++ -*-===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_PASSES_H
#define FP8_DIALECT_FP8_TRANSFORMS_PASSES_H

#include "FP8/Dialect/FP8/IR/FP8Dialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace fp8 {

#define GEN_PASS_DECL
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"

struct ChipInfo;
struct TargetInfo;
class ScaledMatmulOp;

/// On a function: a training step (fp8.linear + fp8.linear_backward) that
/// fp8-split-training-step outlines into `@NAME_forward` and
/// `@NAME_backward`.
inline constexpr llvm::StringLiteral kSplitBackwardAttrName =
    "fp8.split_backward";
/// On a function argument: an output gradient, where the backward starts
/// (fp8-expand-linear marks those of fp8.linear_backward).
inline constexpr llvm::StringLiteral kGradOutputAttrName = "fp8.grad_output";
/// On a function argument or result: the name the runtime and Python bind
/// it by. On an fp8.quantize of a split function: the layer tensor it
/// quantizes ("x", "w", "dy"), which names the tensors the backward keeps.
inline constexpr llvm::StringLiteral kNameAttrName = "fp8.name";

/// Checks `op` against what `chip`'s GEMM lowering can run (the rules of
/// fp8-verify-target); emits an error on `op` when it cannot.
LogicalResult verifyScaledMatmulForChip(ScaledMatmulOp op,
                                        const ChipInfo &chip);

/// Checks any fp8 `op` against what the lowerings for `target` can run: the
/// chip rules above and the kernels' contract (verifyKernelContract,
/// docs/contract.md); emits an error on `op` when they cannot.
LogicalResult verifyOpForTarget(Operation *op, const TargetInfo &target);
/// verifyOpForTarget on every fp8 op nested in `root`; fails if any fails.
LogicalResult verifyOpsForTarget(Operation *root, const TargetInfo &target);
/// verifyOpsForTarget for the module's fp8.target (getTarget), which must
/// be set when `root` holds an fp8 op: what fp8-verify-target runs.
LogicalResult verifyOpsForTarget(Operation *root);

/// Patterns of fp8-decompose-quantize.
void populateDecomposeQuantizePatterns(RewritePatternSet &patterns);

/// Patterns of fp8-fuse-scales: a matmul of dequantized FP8 operands
/// becomes an fp8.scaled_matmul (with fast accumulation for per-tensor and
/// row-wise scales when `fastAccumulation`), which then absorbs the output
/// scale, bias, activation, cast and amax around it.
void populateFuseScalesPatterns(RewritePatternSet &patterns,
                                bool fastAccumulation = false);

/// The rewrite of fp8-blockwise-to-mx: an fp8.scaled_matmul with
/// power-of-two blockwise scales becomes an MXFP8 one, its scales converted
/// to UE8M0 1x32 blocks. The pass first folds the conversion into the
/// quantizations that produce the scales, and applies the rewrite only on a
/// chip with a block-scaled MMA; the pattern does not check the chip.
void populateBlockwiseToMXPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"

} // namespace fp8
} // namespace mlir

#endif // FP8_DIALECT_FP8_TRANSFORMS_PASSES_H

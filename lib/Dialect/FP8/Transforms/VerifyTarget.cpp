//===- VerifyTarget.cpp - Reject fp8 ops the chosen GPU cannot run --------===//

#include "FP8/Conversion/FP8ToGPU/KernelContract.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"
#include "FP8/Dialect/FP8/IR/FP8Target.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8VERIFYTARGET
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

/// MXFP8 GEMMs (`granularity` of A is mx 1x32) need the block-scaled MMA.
static LogicalResult verifyMXForChip(Operation *op, GranularityAttr granularity,
                                     const ChipInfo &chip) {
  if (!granularity.isMX() || chip.supportsBlockScaledMma)
    return success();
  InFlightDiagnostic diag =
      op->emitOpError() << "MXFP8 (mx 1x32, UE8M0 scales) needs block-scaled "
                           "tensor-core MMA, which "
                        << chip.name << " does not have";
  diag.attachNote() << "quantize with #fp8.blockwise or #fp8.current for "
                    << chip.name << ", or target sm_100a";
  return diag;
}

LogicalResult mlir::fp8::verifyScaledMatmulForChip(ScaledMatmulOp op,
                                                  const ChipInfo &chip) {
  if (failed(verifyMXForChip(op, op.getAGranularity(), chip)))
    return failure();
  if (!chip.supportsMNMajorFP8) {
    for (auto [name, major] : {std::pair<StringRef, OperandMajor>{
                                   "A", op.getAMajor()},
                               {"B", op.getBMajor()}}) {
      if (major != OperandMajor::MN)
        continue;
      InFlightDiagnostic diag =
          op.emitOpError()
          << chip.name << " reads FP8 MMA operands K-major only (TN), but "
          << name << " is MN-major";
      diag.attachNote() << "quantize " << name
                        << " with a columnwise output (columnwise_layout = "
                           "transposed) to get a K-major copy";
      return diag;
    }
  }
  return success();
}

LogicalResult mlir::fp8::verifyOpForTarget(Operation *op,
                                           const TargetInfo &target) {
  if (auto matmul = dyn_cast<ScaledMatmulOp>(op))
    if (failed(verifyScaledMatmulForChip(matmul, target.chip)))
      return failure();
  if (auto grouped = dyn_cast<GroupedScaledMatmulOp>(op))
    if (failed(verifyMXForChip(op, grouped.getAGranularity(), target.chip)))
      return failure();
  return verifyKernelContract(op, target);
}

LogicalResult mlir::fp8::verifyOpsForTarget(Operation *root,
                                            const TargetInfo &target) {
  Dialect *fp8 = root->getContext()->getLoadedDialect<FP8Dialect>();
  bool failed = false;
  root->walk([&](Operation *op) {
    if (op->getDialect() == fp8)
      failed |= mlir::failed(verifyOpForTarget(op, target));
  });
  return failure(failed);
}

LogicalResult mlir::fp8::verifyOpsForTarget(Operation *root) {
  // The target is read at the first fp8 op: a module without one has
  // nothing to check (and needs no target).
  Operation *first = nullptr;
  Dialect *fp8 = root->getContext()->getLoadedDialect<FP8Dialect>();
  root->walk([&](Operation *op) {
    if (op->getDialect() != fp8)
      return WalkResult::advance();
    first = op;
    return WalkResult::interrupt();
  });
  if (!first)
    return success();
  FailureOr<TargetInfo> target = getTarget(first);
  if (failed(target))
    return failure();
  return verifyOpsForTarget(root, *target);
}

namespace {
struct VerifyTargetPass
    : public fp8::impl::FP8VerifyTargetBase<VerifyTargetPass> {
  using FP8VerifyTargetBase::FP8VerifyTargetBase;

  void runOnOperation() override {
    if (failed(verifyOpsForTarget(getOperation())))
      signalPassFailure();
  }
};
} // namespace

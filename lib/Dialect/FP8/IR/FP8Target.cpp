//===- FP8Target.cpp - The target a module is compiled for ----------------===//

#include "FP8/Dialect/FP8/IR/FP8Target.h"
#include "FP8/Dialect/FP8/IR/FP8Dialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::fp8;

LogicalResult
TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                   StringRef chip, int64_t smCount,
                   int64_t maxSharedMemoryPerBlock, StringRef ptxFeatures) {
  llvm::Expected<const ChipInfo &> info = parseChip(chip);
  if (!info)
    return emitError() << llvm::toString(info.takeError());
  if (smCount < 1)
    return emitError() << "expected sm_count >= 1, got " << smCount;
  if (maxSharedMemoryPerBlock < 1 ||
      maxSharedMemoryPerBlock > info->maxSharedMemoryPerBlock)
    return emitError() << "expected max_shared_memory_per_block in [1, "
                       << info->maxSharedMemoryPerBlock << "] (" << chip
                       << "'s opt-in maximum), got "
                       << maxSharedMemoryPerBlock;
  if (ptxFeatures.empty())
    return emitError() << "expected ptx_features, e.g. \""
                       << info->ptxFeatures << "\" for " << chip;
  return success();
}

TargetAttr mlir::fp8::getTargetAttr(MLIRContext *context,
                                    const TargetInfo &target) {
  return TargetAttr::get(context, target.chip.name, target.numMultiprocessors,
                         target.maxSharedMemoryPerBlock, target.ptxFeatures);
}

TargetAttr mlir::fp8::lookupTarget(Operation *op) {
  for (; op; op = op->getParentOp())
    if (auto target = op->getAttrOfType<TargetAttr>(kTargetAttrName))
      return target;
  return {};
}

FailureOr<TargetInfo> mlir::fp8::getTarget(Operation *op) {
  TargetAttr target = lookupTarget(op);
  // At the op's location, without the op itself: the pipeline is wrong, not
  // the (whole-module) IR, which a "see current operation" note would dump.
  if (!target)
    return emitError(op->getLoc())
           << "no " << kTargetAttrName
           << " on the module: run fp8-attach-target{chip=...} (fp8-to-ptx "
              "does) first";
  // A verified #fp8.target names a known chip; one built without the
  // verifier gets its diagnostic here.
  llvm::Expected<const ChipInfo &> chip = parseChip(target.getChip());
  if (!chip)
    return emitError(op->getLoc()) << llvm::toString(chip.takeError());
  return TargetInfo{*chip, target.getSmCount(),
                    target.getMaxSharedMemoryPerBlock(),
                    target.getPtxFeatures()};
}

//===- AttachTarget.cpp - Record the target GPU on the module -------------===//
//
// The one place where a chip name from a pass option, a tool flag or an API
// becomes the module's #fp8.target (see the pass description in
// Passes.td). Every pass after it reads the target through getTarget.
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Target.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8ATTACHTARGET
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
struct AttachTargetPass
    : public fp8::impl::FP8AttachTargetBase<AttachTargetPass> {
  using FP8AttachTargetBase::FP8AttachTargetBase;

  void runOnOperation() override;

private:
  /// Checks the options against the target `module` already has.
  LogicalResult checkExisting(ModuleOp module, TargetAttr existing);
};
} // namespace

// The errors go to the module's location, without the op itself: the
// options are wrong, not the (whole-module) IR, which a "see current
// operation" note would dump.

LogicalResult AttachTargetPass::checkExisting(ModuleOp module,
                                              TargetAttr existing) {
  if (!chip.empty() && chip != existing.getChip())
    return emitError(module.getLoc())
           << "cannot attach chip '" << chip
           << "': the module is already compiled for " << existing;
  if (smCount != 0 && smCount.getValue() != existing.getSmCount())
    return emitError(module.getLoc())
           << "cannot attach sm-count=" << smCount.getValue()
           << ": the module is already compiled for " << existing;
  return success();
}

void AttachTargetPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (TargetAttr existing = lookupTarget(module)) {
    if (failed(checkExisting(module, existing)))
      signalPassFailure();
    return;
  }
  if (chip.empty()) {
    emitError(module.getLoc())
        << "no target chip: the module has no " << kTargetAttrName
        << " and no chip was given (expected one of "
        << describeSupportedChips() << ")";
    return signalPassFailure();
  }
  llvm::Expected<const ChipInfo &> info = parseChip(chip);
  if (!info) {
    emitError(module.getLoc()) << llvm::toString(info.takeError());
    return signalPassFailure();
  }
  if (smCount < 0) {
    emitError(module.getLoc())
        << "expected sm-count >= 1 (or 0 for " << info->name << "'s "
        << info->numMultiprocessors << "), got " << smCount.getValue();
    return signalPassFailure();
  }
  TargetInfo target = TargetInfo::getDefault(*info);
  if (smCount != 0)
    target.numMultiprocessors = smCount;
  module->setAttr(kTargetAttrName, getTargetAttr(&getContext(), target));
}

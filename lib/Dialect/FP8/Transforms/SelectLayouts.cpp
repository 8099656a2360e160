//===- SelectLayouts.cpp - Legal operand majors per chip ------------------===//
//
// Makes the operands of fp8.scaled_matmul K-major where the chip's MMA reads
// FP8 K-major only, by changing the direction of the fp8.quantize output
// that produces them (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"
#include "FP8/Dialect/FP8/IR/FP8Target.h"

#include "mlir/IR/Builders.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8SELECTLAYOUTS
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

/// `type` with its two dimensions swapped.
static RankedTensorType getTransposedType(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.clone({tensor.getDimSize(1), tensor.getDimSize(0)});
}

/// Whether every use of `value` is an MN-major operand of a scaled_matmul
/// (what a change of its layout must update).
static bool onlyFeedsMNMajorOperands(Value value) {
  return llvm::all_of(value.getUses(), [](OpOperand &use) {
    auto matmul = dyn_cast<ScaledMatmulOp>(use.getOwner());
    if (!matmul)
      return false;
    if (&use == &matmul.getAMutable())
      return matmul.getAMajor() == OperandMajor::MN;
    if (&use == &matmul.getBMutable())
      return matmul.getBMajor() == OperandMajor::MN;
    return false;
  });
}

/// Marks the scaled_matmul operands among the uses of `value` K-major.
static void setUsesKMajor(Value value) {
  for (OpOperand &use : value.getUses()) {
    auto matmul = cast<ScaledMatmulOp>(use.getOwner());
    if (&use == &matmul.getAMutable())
      matmul.setAMajor(OperandMajor::K);
    else
      matmul.setBMajor(OperandMajor::K);
  }
}

/// Recreates `q` with `columnwise` (and its scales) stored transposed; the
/// other results keep their types. Replaces `q` and returns the new op.
static QuantizeOp rebuildWithTransposedColumnwise(OpBuilder &b, QuantizeOp q,
                                                  bool keepRowwise) {
  Type rowwise = keepRowwise && q.getRowwise() ? q.getRowwise().getType()
                                               : Type();
  Type rowwiseScale = rowwise ? q.getRowwiseScaleInv().getType() : Type();
  Type columnwise, columnwiseScale;
  if (q.getColumnwise()) {
    // An untransposed columnwise output: the same data, stored [C, R]; its
    // scales are already in the transposed input's orientation.
    columnwise = getTransposedType(q.getColumnwise().getType());
    columnwiseScale = q.getColumnwiseScaleInv().getType();
  } else {
    // Per-tensor rowwise data, reread as the transposed input's quantization.
    columnwise = getTransposedType(q.getRowwise().getType());
    columnwiseScale = q.getRowwiseScaleInv().getType();
  }
  Type amax = q.getAmax() ? q.getAmax().getType() : Type();
  b.setInsertionPoint(q);
  auto flipped = QuantizeOp::create(
      b, q.getLoc(), rowwise, rowwiseScale, columnwise, columnwiseScale, amax,
      q.getInput(), q.getScale(), q.getRecipe(), q.getGranularity(),
      ColumnwiseLayout::Transposed, q.getScaleGranularityAttr());
  flipped->setDiscardableAttrs(q->getDiscardableAttrDictionary());
  return flipped;
}

/// Makes the MN-major operand `value` of a scaled_matmul K-major by flipping
/// its producer, or reports why it cannot.
static LogicalResult makeKMajor(OpBuilder &b, ScaledMatmulOp matmul,
                                StringRef name, Value value,
                                const ChipInfo &chip) {
  auto reportFailure = [&](const Twine &why) {
    InFlightDiagnostic diag =
        matmul.emitOpError()
        << chip.name << " reads FP8 MMA operands K-major only (TN), and the "
        << "MN-major " << name << " cannot be made K-major: " << why;
    diag.attachNote() << "quantize " << name
                      << " with a columnwise output (columnwise_layout = "
                         "transposed) to get a K-major copy";
    return diag;
  };
  auto q = value.getDefiningOp<QuantizeOp>();
  if (!q)
    return reportFailure("it is not produced by an fp8.quantize (no FP8 "
                         "transpose is generated)");

  if (value == q.getColumnwise()) {
    if (q.getColumnwiseLayout() == ColumnwiseLayout::Transposed)
      return reportFailure("its columnwise output is already transposed");
    if (!onlyFeedsMNMajorOperands(value))
      return reportFailure("its columnwise output has users other than "
                           "MN-major scaled_matmul operands");
    QuantizeOp flipped =
        rebuildWithTransposedColumnwise(b, q, /*keepRowwise=*/true);
    setUsesKMajor(q.getColumnwise());
    q.getColumnwise().replaceAllUsesWith(flipped.getColumnwise());
    q.getColumnwiseScaleInv().replaceAllUsesWith(
        flipped.getColumnwiseScaleInv());
    if (q.getRowwise()) {
      q.getRowwise().replaceAllUsesWith(flipped.getRowwise());
      q.getRowwiseScaleInv().replaceAllUsesWith(flipped.getRowwiseScaleInv());
    }
    if (q.getAmax())
      q.getAmax().replaceAllUsesWith(flipped.getAmax());
    q.erase();
    return success();
  }

  // The rowwise output, stored [K, MN].
  if (!q.getGranularity().isTensor())
    return reportFailure(Twine("it is the rowwise output of a ") +
                         "non-per-tensor quantize, whose blocks run along the "
                         "wrong dimension for a K-major copy");
  if (q.getColumnwise())
    return reportFailure("its quantize already has a columnwise output");
  bool keepRowwise = !onlyFeedsMNMajorOperands(value);
  QuantizeOp flipped = rebuildWithTransposedColumnwise(b, q, keepRowwise);
  // Per-tensor: the columnwise scale is the rowwise one, bit for bit.
  for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
    auto user = dyn_cast<ScaledMatmulOp>(use.getOwner());
    bool isA = user && &use == &user.getAMutable() &&
               user.getAMajor() == OperandMajor::MN;
    bool isB = user && &use == &user.getBMutable() &&
               user.getBMajor() == OperandMajor::MN;
    if (!isA && !isB)
      continue;
    use.set(flipped.getColumnwise());
    if (isA)
      user.setAMajor(OperandMajor::K);
    else
      user.setBMajor(OperandMajor::K);
  }
  if (keepRowwise) {
    q.getRowwise().replaceAllUsesWith(flipped.getRowwise());
    q.getRowwiseScaleInv().replaceAllUsesWith(flipped.getRowwiseScaleInv());
  } else {
    q.getRowwiseScaleInv().replaceAllUsesWith(
        flipped.getColumnwiseScaleInv());
  }
  if (q.getAmax())
    q.getAmax().replaceAllUsesWith(flipped.getAmax());
  q.erase();
  return success();
}

namespace {
struct SelectLayoutsPass
    : public fp8::impl::FP8SelectLayoutsBase<SelectLayoutsPass> {
  using FP8SelectLayoutsBase::FP8SelectLayoutsBase;

  void runOnOperation() override {
    SmallVector<ScaledMatmulOp> matmuls;
    getOperation()->walk([&](ScaledMatmulOp op) { matmuls.push_back(op); });
    OpBuilder b(&getContext());
    bool failed = false;
    for (ScaledMatmulOp op : matmuls) {
      FailureOr<TargetInfo> target = getTarget(op);
      if (mlir::failed(target))
        return signalPassFailure();
      const ChipInfo *info = &target->chip;
      // Only tensors have producers to flip; memrefs are already placed.
      bool flipFailed = false;
      if (!info->supportsMNMajorFP8 && isa<RankedTensorType>(op.getA().getType())) {
        if (op.getAMajor() == OperandMajor::MN)
          flipFailed |= mlir::failed(makeKMajor(b, op, "A", op.getA(), *info));
        if (op.getBMajor() == OperandMajor::MN)
          flipFailed |= mlir::failed(makeKMajor(b, op, "B", op.getB(), *info));
      }
      failed |= flipFailed;
    }
    if (failed)
      return signalPassFailure();
    // fp8-verify-target's checks of every op, on the layouts chosen.
    if (mlir::failed(verifyOpsForTarget(getOperation())))
      signalPassFailure();
  }
};
} // namespace

//===- LowerQuantize.cpp - Quantization ops to GPU kernels ----------------===//
//
// Builds one kernel per distinct quantization (shape, dtypes, recipe,
// outputs) with the shared quantization kernel builder
// (QuantizeKernels/QuantizeKernel) and replaces the ops, on tensors, by
// `fp8.launch`es of host launcher declarations (`@NAME_launch_into`, the
// kernel's operands as memrefs) in destination-passing style: each output
// starts as a `tensor.empty`, a zero-filled tensor (an amax the kernel
// max-accumulates into) or the history it updates in place; one-shot
// bufferization then makes them calls on buffers.
//
// * `fp8.amax` -> an amax kernel (atomic max into a zeroed scalar);
// * `fp8.quantize ... scale (fp8.compute_scale #fp8.current (%amax))` -> a
//   cast kernel that applies the current-scaling rule to %amax itself (so
//   per-tensor current scaling is two launches: amax, then cast);
// * `fp8.quantize` with a `scale` (delayed scaling) -> a cast kernel; when its
//   amax feeds an `fp8.update_amax_history`, the kernel records the amax
//   into the history in the same pass (otherwise into the zeroed scalar of
//   the op's amax result);
// * blockwise and MXFP8 `fp8.quantize` -> one kernel computing each block's
//   amax and scale and casting, rowwise and/or columnwise from one read;
// * what is left of `fp8.compute_scale` and `fp8.update_amax_history` after
//   that fusion -> one-CTA kernels (QuantizeKernels/ScaleKernels), the
//   history updated in place;
// * `fp8.dequantize` -> a kernel reading the scale layouts the
//   quantization kernels write (QuantizeKernels/DequantizeKernel);
// * `fp8.scales_to_mx` -> a kernel writing blockwise scales as MX atoms
//   (QuantizeKernels/ScaleKernels);
// * a tensor `arith.truncf` from f32 to bf16/f16 -> a conversion kernel
//   (QuantizeKernels/ConvertKernel): the rounding of f32 partial sums
//   reduced across devices.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/Passes.h"
#include "FP8/Conversion/QuantizeKernels/ConvertKernel.h"
#include "FP8/Conversion/QuantizeKernels/DequantizeKernel.h"
#include "FP8/Conversion/QuantizeKernels/QuantizeKernel.h"
#include "FP8/Conversion/QuantizeKernels/ScaleConversionKernel.h"
#include "FP8/Conversion/QuantizeKernels/ScaleKernels.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/IR/FP8Target.h"
#include "KernelModule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8LOWERQUANTIZE
#include "FP8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
struct LowerQuantizePass
    : public fp8::impl::FP8LowerQuantizeBase<LowerQuantizePass> {
  using FP8LowerQuantizeBase::FP8LowerQuantizeBase;

  void runOnOperation() override;

private:
  const ChipInfo *info = nullptr;
  gpu::GPUModuleOp kernels;

  /// How a kernel family builds a kernel and its `fp8.kernel_metadata`.
  template <typename Problem>
  using BuildFn = gpu::GPUFuncOp (*)(OpBuilder &, Location, gpu::GPUModuleOp,
                                     StringRef, const Problem &);
  template <typename Problem>
  using MetadataFn = md::KernelMetadata (*)(StringRef, const ChipInfo &,
                                            const Problem &);

  /// Kernel `name` of `problem` (made by `build` and `metadata` on first
  /// use) launched at `op` on `operands`, the kernel's in order, which the
  /// kernel uses as `access` says (an operand it writes is an output: its
  /// value is the output's initial one); returns the outputs' new values,
  /// in operand order.
  template <typename Problem>
  FailureOr<ValueRange> launch(Operation *op, StringRef name,
                               const Problem &problem, BuildFn<Problem> build,
                               MetadataFn<Problem> metadata,
                               ValueRange operands,
                               ArrayRef<LauncherAccess> access);
  FailureOr<ValueRange> launch(Operation *op, const QuantizeProblem &problem,
                               ValueRange operands,
                               ArrayRef<LauncherAccess> access) {
    return launch(op, getQuantizeKernelName(problem), problem,
                  buildQuantizeKernel, buildQuantizeKernelMetadata, operands,
                  access);
  }
  FailureOr<ValueRange> launch(Operation *op,
                               const ScaleKernelProblem &problem,
                               ValueRange operands,
                               ArrayRef<LauncherAccess> access) {
    return launch(op, getScaleKernelName(problem), problem, buildScaleKernel,
                  buildScaleKernelMetadata, operands, access);
  }
  LogicalResult lower(AmaxOp op);
  LogicalResult lower(QuantizeOp op);
  LogicalResult lower(ComputeScaleOp op);
  LogicalResult lower(UpdateAmaxHistoryOp op);
  LogicalResult lower(DequantizeOp op);
  LogicalResult lower(ScalesToMXOp op);
  LogicalResult lower(arith::TruncFOp op);
};
} // namespace

template <typename Problem>
FailureOr<ValueRange> LowerQuantizePass::launch(
    Operation *op, StringRef name, const Problem &problem,
    BuildFn<Problem> build, MetadataFn<Problem> metadata, ValueRange operands,
    ArrayRef<LauncherAccess> access) {
  OpBuilder builder(op);
  if (!kernels)
    kernels = getOrCreateKernelModule(getOperation());
  if (!kernels.lookupSymbol(name)) {
    gpu::GPUFuncOp kernel =
        build(builder, op->getLoc(), kernels, name, problem);
    kernel->setAttr(kKernelMetadataAttrName,
                    getKernelMetadataAttr(op->getContext(),
                                          metadata(name, *info, problem)));
    kernel->setAttr(kGridConstantArgsAttrName,
                    builder.getDenseI32ArrayAttr({}));
  }
  return createLaunch(op, kernels, name, operands, access);
}

/// Replaces `op` by the outputs of its launch, in order.
static LogicalResult replaceByOutputs(Operation *op,
                                      FailureOr<ValueRange> outputs) {
  if (failed(outputs))
    return failure();
  op->replaceAllUsesWith(*outputs);
  op->erase();
  return success();
}

/// The extent of the dynamic dimensions of a quantization output: the row
/// count R of `input` (the only run-time extent the kernels take), or
/// ceil(R / block) for `block` rows per scale.
static Value getRowExtent(OpBuilder &builder, Location loc, Value input,
                          int64_t block) {
  Value rows = tensor::DimOp::create(builder, loc, input, 0);
  if (block == 1)
    return rows;
  return arith::CeilDivUIOp::create(
      builder, loc, rows, arith::ConstantIndexOp::create(builder, loc, block));
}

/// The initial value of a pure output of `type` at `op`: a `tensor.empty`
/// whose dynamic extents are `getRowExtent(input, block)`.
static Value createOutput(Operation *op, Type type, Value input,
                          int64_t block = 1) {
  OpBuilder builder(op);
  auto tensorType = cast<RankedTensorType>(type);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < tensorType.getRank(); ++d)
    if (tensorType.isDynamicDim(d))
      sizes.push_back(getRowExtent(builder, op->getLoc(), input, block));
  return tensor::EmptyOp::create(builder, op->getLoc(), tensorType.getShape(),
                                 tensorType.getElementType(), sizes);
}

LogicalResult LowerQuantizePass::lower(AmaxOp op) {
  FailureOr<QuantizeProblem> problem = QuantizeProblem::get(op);
  if (failed(problem))
    return failure();
  Value zero =
      createZeroFilled(op, cast<RankedTensorType>(op.getAmax().getType()));
  FailureOr<ValueRange> results =
      launch(op, *problem, {op.getInput(), zero},
             {LauncherAccess::Read, LauncherAccess::ReadWrite});
  if (failed(results))
    return failure();
  op.getAmax().replaceAllUsesWith(results->front());
  op.erase();
  return success();
}

/// The rows of the blocks whose scales `scale` holds along its dynamic
/// dimension, if any (the input's R): rowwise scales run along R in blocks
/// of the tile's rows, columnwise ones (of x^T) in blocks of its columns.
static int64_t getScaleRowBlock(QuantizeOp op, bool columnwise) {
  GranularityAttr g = op.getScaleGranularityAttr() ? op.getScaleGranularityAttr()
                                                   : op.getGranularity();
  if (!g.isTile() && !g.isMX())
    return 1;
  return columnwise ? g.getTile().cols : g.getTile().rows;
}

LogicalResult LowerQuantizePass::lower(QuantizeOp op) {
  // Current scaling whose scale is compute_scale's of an amax: the cast
  // reads the amax and applies the rule (compute_scale fused into it).
  Value scaleOperand = op.getScale();
  auto computeScale =
      scaleOperand ? scaleOperand.getDefiningOp<ComputeScaleOp>() : nullptr;
  bool scaleFromAmax = computeScale &&
                       computeScale.getScale() == scaleOperand &&
                       isa<CurrentScalingAttr>(op.getRecipe()) &&
                       computeScale.getRecipe() == op.getRecipe() &&
                       computeScale.getElementType() ==
                           cast<ShapedType>(op.getRowwise()
                                                ? op.getRowwise().getType()
                                                : op.getColumnwise().getType())
                               .getElementType();
  // Delayed scaling: the amax goes into a history, in the same pass. Fused
  // with the update_amax_history that consumes it; otherwise max-ed into
  // the zeroed scalar of the op's amax result.
  UpdateAmaxHistoryOp update;
  int64_t historyLength = 0;
  if (Value amax = op.getAmax(); amax && !amax.use_empty()) {
    if (amax.hasOneUse())
      update = dyn_cast<UpdateAmaxHistoryOp>(*amax.getUsers().begin());
    if (update && update.getAmax() != amax)
      update = nullptr;
    historyLength =
        update ? update.getHistory().getType().getDimSize(0) : 1;
  }

  FailureOr<QuantizeProblem> problem =
      QuantizeProblem::get(op, *info, scaleFromAmax, historyLength);
  if (failed(problem))
    return failure();
  problem->amaxScalar = historyLength > 0 && !update;

  SmallVector<Value> operands = {op.getInput()};
  if (problem->scaleSource == QuantizeScaleSource::Given)
    operands.push_back(scaleOperand);
  if (problem->scaleSource == QuantizeScaleSource::FromAmax)
    operands.push_back(computeScale.getAmax());
  SmallVector<LauncherAccess> access(operands.size(), LauncherAccess::Read);
  SmallVector<Value> replaced;
  auto addOutput = [&](Value result, int64_t block) {
    if (!result)
      return;
    operands.push_back(createOutput(op, result.getType(), op.getInput(), block));
    access.push_back(LauncherAccess::Write);
    replaced.push_back(result);
  };
  addOutput(op.getRowwise(), 1);
  addOutput(op.getRowwiseScaleInv(), getScaleRowBlock(op, false));
  addOutput(op.getColumnwise(), 1);
  addOutput(op.getColumnwiseScaleInv(), getScaleRowBlock(op, true));
  if (historyLength > 0) {
    operands.push_back(update
                           ? update.getHistory()
                           : createZeroFilled(op, cast<RankedTensorType>(
                                                      op.getAmax().getType())));
    access.push_back(LauncherAccess::ReadWrite);
    replaced.push_back(update ? update.getResult() : op.getAmax());
  }

  FailureOr<ValueRange> results = launch(op, *problem, operands, access);
  if (failed(results))
    return failure();
  for (auto [from, to] : llvm::zip_equal(replaced, *results))
    from.replaceAllUsesWith(to);
  if (update)
    update.erase();
  op.erase();
  if (scaleFromAmax && computeScale->use_empty())
    computeScale.erase();
  return success();
}

LogicalResult LowerQuantizePass::lower(ComputeScaleOp op) {
  ScaleKernelProblem problem = ScaleKernelProblem::get(op);
  using A = LauncherAccess;
  Value scale = createOutput(op, op.getScale().getType(), Value());
  Value scaleInv = createOutput(op, op.getScaleInv().getType(), Value());
  bool delayed = problem.kind == ScaleKernelProblem::Kind::DelayedScale;
  // Current: amax -> scale, scale_inv. Delayed: the history (rolled in
  // place for the next step), the previous scale -> scale, scale_inv.
  FailureOr<ValueRange> results =
      delayed ? launch(
                    op, problem,
                    {op.getAmax(), op.getPreviousScale(), scale, scaleInv},
                    {A::ReadWrite, A::Read, A::Write, A::Write})
              : launch(op, problem, {op.getAmax(), scale, scaleInv},
                                  {A::Read, A::Write, A::Write});
  if (failed(results))
    return failure();
  ValueRange launched = *results;
  op.getScale().replaceAllUsesWith(launched[delayed]);
  op.getScaleInv().replaceAllUsesWith(launched[delayed + 1]);
  if (delayed && op.getNextHistory())
    op.getNextHistory().replaceAllUsesWith(launched[0]);
  op.erase();
  return success();
}

LogicalResult LowerQuantizePass::lower(UpdateAmaxHistoryOp op) {
  FailureOr<ValueRange> results = launch(
      op, ScaleKernelProblem::get(op), {op.getHistory(), op.getAmax()},
      {LauncherAccess::ReadWrite, LauncherAccess::Read});
  if (failed(results))
    return failure();
  op.getResult().replaceAllUsesWith(results->front());
  op.erase();
  return success();
}

LogicalResult LowerQuantizePass::lower(DequantizeOp op) {
  FailureOr<DequantizeProblem> problem = DequantizeProblem::get(op);
  if (failed(problem))
    return failure();
  Value result = createOutput(op, op.getResult().getType(), op.getInput());
  return replaceByOutputs(
      op, launch(op, getDequantizeKernelName(*problem), *problem,
                 buildDequantizeKernel, buildDequantizeKernelMetadata,
                 {op.getInput(), op.getScaleInv(), result},
                 {LauncherAccess::Read, LauncherAccess::Read,
                  LauncherAccess::Write}));
}

LogicalResult LowerQuantizePass::lower(ScalesToMXOp op) {
  FailureOr<ScalesToMXProblem> problem = ScalesToMXProblem::get(op);
  if (failed(problem))
    return failure();
  Value result = createOutput(op, op.getResult().getType(), op.getInput());
  return replaceByOutputs(
      op, launch(op, getScalesToMXKernelName(*problem), *problem,
                 buildScalesToMXKernel, buildScalesToMXKernelMetadata,
                 {op.getInput(), result},
                 {LauncherAccess::Read, LauncherAccess::Write}));
}

LogicalResult LowerQuantizePass::lower(arith::TruncFOp op) {
  if (!ConvertProblem::matches(op))
    return success(); // not a conversion of tensors this pass lowers
  FailureOr<ConvertProblem> problem = ConvertProblem::get(op);
  if (failed(problem))
    return failure();
  Value result = createOutput(op, op.getType(), op.getIn());
  return replaceByOutputs(
      op, launch(op, getConvertKernelName(*problem), *problem,
                 buildConvertKernel, buildConvertKernelMetadata,
                 {op.getIn(), result},
                 {LauncherAccess::Read, LauncherAccess::Write}));
}

void LowerQuantizePass::runOnOperation() {
  Operation *first = nullptr;
  getOperation().walk([&](Operation *op) {
    auto truncf = dyn_cast<arith::TruncFOp>(op);
    if (!isa<AmaxOp, QuantizeOp, ComputeScaleOp, UpdateAmaxHistoryOp,
             DequantizeOp, ScalesToMXOp>(op) &&
        !(truncf && ConvertProblem::matches(truncf)))
      return WalkResult::advance();
    first = op;
    return WalkResult::interrupt();
  });
  if (!first)
    return;
  FailureOr<TargetInfo> target = getTarget(first);
  if (failed(target))
    return signalPassFailure();
  info = &target->chip;
  // Casts first: they absorb the compute_scale and update_amax_history ops
  // they can; the rest get kernels of their own.
  bool failedAny = false;
  auto lowerEach = [&](auto opTag) {
    using OpTy = decltype(opTag);
    SmallVector<OpTy> ops;
    getOperation().walk([&](OpTy op) { ops.push_back(op); });
    for (OpTy op : ops) {
      // Outside strict mode an op no kernel takes yet stays as it is (and
      // so does its diagnostic, unless strict).
      std::optional<ScopedDiagnosticHandler> quiet;
      if (!strict)
        quiet.emplace(&getContext(), [](Diagnostic &) { return success(); });
      LogicalResult lowered = lower(op);
      failedAny |= strict && failed(lowered);
    }
  };
  lowerEach(AmaxOp());
  lowerEach(QuantizeOp());
  lowerEach(ComputeScaleOp());
  lowerEach(UpdateAmaxHistoryOp());
  lowerEach(DequantizeOp());
  lowerEach(ScalesToMXOp());
  lowerEach(arith::TruncFOp());
  if (failedAny)
    signalPassFailure();
}

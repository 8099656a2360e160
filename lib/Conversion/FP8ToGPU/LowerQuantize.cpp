//===- LowerQuantize.cpp - Quantization ops to GPU kernels ----------------===//
//
// Builds one kernel per distinct quantization (shape, dtypes, recipe,
// outputs) with the shared quantization kernel builder
// (KernelSkeleton/QuantizeKernel) and replaces the ops by calls of host
// launcher declarations, as fp8-lower-scaled-matmul does for GEMMs:
//
// * `fp8.amax` -> an amax kernel (atomic max into a zeroed scalar);
// * `fp8.quantize ... scale (fp8.compute_scale #fp8.current (%amax))` -> a
//   cast kernel that applies the current-scaling rule to %amax itself (so
//   per-tensor current scaling is two launches: amax, then cast);
// * `fp8.quantize` with a `scale` (delayed scaling) -> a cast kernel; when its
//   amax feeds an `fp8.update_amax_history`, the kernel records the amax
//   into the history in the same pass;
// * blockwise and MXFP8 `fp8.quantize` -> one kernel computing each block's
//   amax and scale and casting, rowwise and/or columnwise from one read;
// * what is left of `fp8.compute_scale` and `fp8.update_amax_history` after
//   that fusion -> one-CTA kernels (KernelSkeleton/ScaleKernels), the
//   history updated in place;
// * `fp8.dequantize` -> a kernel reading the scale layouts the
//   quantization kernels write (KernelSkeleton/DequantizeKernel).
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/KernelSkeleton/DequantizeKernel.h"
#include "FP8/Conversion/KernelSkeleton/QuantizeKernel.h"
#include "FP8/Conversion/KernelSkeleton/ScaleKernels.h"
#include "FP8/Conversion/Passes.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/IR/FP8Target.h"
#include "KernelModule.h"

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

  /// Builds a kernel (with its `fp8.kernel_metadata`) into the module.
  using KernelBuilderFn =
      function_ref<gpu::GPUFuncOp(OpBuilder &, gpu::GPUModuleOp)>;

  /// Kernel `name` (made by `build` on first use) and its launcher called
  /// with `inputs` at `op`; returns the call's results (`resultTypes`).
  /// `written[i]`: launcher argument i is an in/out buffer.
  FailureOr<ValueRange> launch(Operation *op, StringRef name,
                               KernelBuilderFn build, ValueRange inputs,
                               TypeRange resultTypes, ArrayRef<bool> written);
  FailureOr<ValueRange> launch(Operation *op, const QuantizeProblem &problem,
                               ValueRange inputs, TypeRange resultTypes,
                               ArrayRef<bool> written);
  /// Replaces `op` by a launch of its kernel with `inputs`, the op's results
  /// (in order) becoming the launcher's.
  LogicalResult replaceByLaunch(Operation *op, StringRef name,
                                KernelBuilderFn build, ValueRange inputs,
                                ArrayRef<bool> written);
  /// Replaces `op` by a launch of the scale kernel of `problem`.
  LogicalResult lowerToScaleKernel(Operation *op,
                                   const ScaleKernelProblem &problem,
                                   ValueRange inputs, ArrayRef<bool> written);
  LogicalResult lower(AmaxOp op);
  LogicalResult lower(QuantizeOp op);
  LogicalResult lower(ComputeScaleOp op);
  LogicalResult lower(UpdateAmaxHistoryOp op);
  LogicalResult lower(DequantizeOp op);
};
} // namespace

FailureOr<ValueRange> LowerQuantizePass::launch(Operation *op, StringRef name,
                                                KernelBuilderFn build,
                                                ValueRange inputs,
                                                TypeRange resultTypes,
                                                ArrayRef<bool> written) {
  OpBuilder builder(op);
  if (!kernels)
    kernels = getOrCreateKernelModule(getOperation());
  if (!kernels.lookupSymbol(name)) {
    gpu::GPUFuncOp kernel = build(builder, kernels);
    kernel->setAttr(kGridConstantArgsAttrName,
                    builder.getDenseI32ArrayAttr({}));
  }
  func::FuncOp launcher = getOrCreateLauncher(
      getOperation(), op, kernels, name, (name + "_launch").str(),
      builder.getFunctionType(inputs.getTypes(), resultTypes), written);
  if (!launcher)
    return failure();
  return func::CallOp::create(builder, op->getLoc(), launcher, inputs)
      .getResults();
}

FailureOr<ValueRange> LowerQuantizePass::launch(Operation *op,
                                                const QuantizeProblem &problem,
                                                ValueRange inputs,
                                                TypeRange resultTypes,
                                                ArrayRef<bool> written) {
  std::string name = getQuantizeKernelName(problem);
  return launch(
      op, name,
      [&](OpBuilder &builder, gpu::GPUModuleOp module) {
        gpu::GPUFuncOp kernel =
            buildQuantizeKernel(builder, op->getLoc(), module, name, problem);
        kernel->setAttr(kKernelMetadataAttrName,
                        getKernelMetadataAttr(
                            op->getContext(),
                            buildQuantizeKernelMetadata(name, *info, problem)));
        return kernel;
      },
      inputs, resultTypes, written);
}

LogicalResult LowerQuantizePass::replaceByLaunch(Operation *op, StringRef name,
                                                 KernelBuilderFn build,
                                                 ValueRange inputs,
                                                 ArrayRef<bool> written) {
  FailureOr<ValueRange> results =
      launch(op, name, build, inputs, op->getResultTypes(), written);
  if (failed(results))
    return failure();
  op->replaceAllUsesWith(*results);
  op->erase();
  return success();
}

/// A zero f32 tensor of `type` at `op`: what an amax accumulator starts from.
static Value createZeros(Operation *op, RankedTensorType type) {
  OpBuilder builder(op);
  return arith::ConstantOp::create(
      builder, op->getLoc(),
      DenseElementsAttr::get(type, builder.getF32FloatAttr(0.f)));
}

LogicalResult LowerQuantizePass::lower(AmaxOp op) {
  FailureOr<QuantizeProblem> problem = QuantizeProblem::get(op);
  if (failed(problem))
    return failure();
  auto amaxType = cast<RankedTensorType>(op.getAmax().getType());
  Value zero = createZeros(op, amaxType);
  FailureOr<ValueRange> results =
      launch(op, *problem, {op.getInput(), zero}, {amaxType}, {false, true});
  if (failed(results))
    return failure();
  op.getAmax().replaceAllUsesWith(results->front());
  op.erase();
  return success();
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
  // with the update_amax_history that consumes it; otherwise into a fresh
  // one-slot history.
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

  SmallVector<Value> inputs = {op.getInput()};
  if (problem->scaleSource == QuantizeScaleSource::Given)
    inputs.push_back(scaleOperand);
  if (problem->scaleSource == QuantizeScaleSource::FromAmax)
    inputs.push_back(computeScale.getAmax());
  SmallVector<Value> replaced;
  for (Value v : {op.getRowwise(), op.getRowwiseScaleInv(), op.getColumnwise(),
                  op.getColumnwiseScaleInv()})
    if (v)
      replaced.push_back(v);
  SmallVector<Type> resultTypes = llvm::to_vector(
      llvm::map_range(replaced, [](Value v) { return v.getType(); }));
  auto historyType = RankedTensorType::get({historyLength},
                                           Float32Type::get(&getContext()));
  if (historyLength > 0) {
    inputs.push_back(update ? update.getHistory()
                            : createZeros(op, historyType));
    resultTypes.push_back(historyType);
  }
  SmallVector<bool> written(inputs.size(), false);
  if (historyLength > 0)
    written.back() = true;

  FailureOr<ValueRange> results =
      launch(op, *problem, inputs, resultTypes, written);
  if (failed(results))
    return failure();
  for (auto [from, to] : llvm::zip(replaced, *results))
    from.replaceAllUsesWith(to);
  if (historyLength > 0) {
    Value history = results->back();
    if (update) {
      update.getResult().replaceAllUsesWith(history);
      update.erase();
    } else {
      OpBuilder builder(op);
      op.getAmax().replaceAllUsesWith(tensor::CollapseShapeOp::create(
          builder, op.getLoc(), op.getAmax().getType(), history,
          ArrayRef<ReassociationIndices>{}));
    }
  }
  op.erase();
  if (scaleFromAmax && computeScale->use_empty())
    computeScale.erase();
  return success();
}

LogicalResult LowerQuantizePass::lowerToScaleKernel(
    Operation *op, const ScaleKernelProblem &problem, ValueRange inputs,
    ArrayRef<bool> written) {
  std::string name = getScaleKernelName(problem);
  return replaceByLaunch(
      op, name,
      [&](OpBuilder &builder, gpu::GPUModuleOp module) {
        gpu::GPUFuncOp kernel =
            buildScaleKernel(builder, op->getLoc(), module, name, problem);
        kernel->setAttr(
            kKernelMetadataAttrName,
            getKernelMetadataAttr(
                &getContext(), buildScaleKernelMetadata(name, *info, problem)));
        return kernel;
      },
      inputs, written);
}

LogicalResult LowerQuantizePass::lower(ComputeScaleOp op) {
  ScaleKernelProblem problem = ScaleKernelProblem::get(op);
  // Delayed: (history, previous_scale) -> (scale, scale_inv, next history),
  // the history rolled in place.
  if (problem.kind == ScaleKernelProblem::Kind::DelayedScale)
    return lowerToScaleKernel(op, problem,
                              {op.getAmax(), op.getPreviousScale()},
                              {true, false});
  return lowerToScaleKernel(op, problem, {op.getAmax()}, {false});
}

LogicalResult LowerQuantizePass::lower(UpdateAmaxHistoryOp op) {
  return lowerToScaleKernel(op, ScaleKernelProblem::get(op),
                            {op.getHistory(), op.getAmax()}, {true, false});
}

LogicalResult LowerQuantizePass::lower(DequantizeOp op) {
  FailureOr<DequantizeProblem> problem = DequantizeProblem::get(op);
  if (failed(problem))
    return failure();
  std::string name = getDequantizeKernelName(*problem);
  return replaceByLaunch(
      op, name,
      [&](OpBuilder &builder, gpu::GPUModuleOp module) {
        gpu::GPUFuncOp kernel =
            buildDequantizeKernel(builder, op.getLoc(), module, name, *problem);
        kernel->setAttr(
            kKernelMetadataAttrName,
            getKernelMetadataAttr(&getContext(), buildDequantizeKernelMetadata(
                                                     name, *info, *problem)));
        return kernel;
      },
      {op.getInput(), op.getScaleInv()}, {false, false});
}

void LowerQuantizePass::runOnOperation() {
  Operation *first = nullptr;
  getOperation().walk([&](Operation *op) {
    if (!isa<AmaxOp, QuantizeOp, ComputeScaleOp, UpdateAmaxHistoryOp,
             DequantizeOp>(op))
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
  if (failedAny)
    signalPassFailure();
}

//===- FP8LinearOps.cpp - The linear layer ops ----------------------------===//
//
// The verifiers of the linear layer (fp8.linear, fp8.linear_backward: shapes
// and the scale operands of the per-tensor recipes) and of the expert
// (grouped) linear layer (fp8.grouped_linear, fp8.grouped_linear_backward:
// the shapes of the tokens, the per-expert weights and the two forms of the
// experts' rows).
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Contract.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "ShapeCompatibility.h"

#include "mlir/IR/BuiltinTypes.h"

#include <array>

using namespace mlir;
using namespace mlir::fp8;

using contract::formatShape;
using mlir::fp8::detail::isCompatibleShape;

static ShapedType getShapedType(Value v) {
  return cast<ShapedType>(v.getType());
}

static ArrayRef<int64_t> getShape(Value v) {
  return getShapedType(v).getShape();
}

/// Checks `value`'s shape against `expected` ([...] spelled `what`).
static LogicalResult expectShape(Operation *op, StringRef name, Value value,
                                 ArrayRef<int64_t> expected, StringRef what) {
  if (isCompatibleShape(getShape(value), expected))
    return success();
  return op->emitOpError() << "expected " << name << " of shape " << what
                           << " = " << formatShape(expected) << ", got "
                           << formatShape(getShape(value));
}

/// The layer's extents {M, G, N, K} from X [M, K] and W [G, N, K], after
/// checking that they agree on K.
static FailureOr<std::array<int64_t, 4>>
verifyGroupedLayer(Operation *op, Value input, Value weight, Value groupIndex) {
  ArrayRef<int64_t> x = getShape(input), w = getShape(weight);
  if (!isCompatibleShape({x[1]}, {w[2]}))
    return op->emitOpError()
           << "expected the input [M, K] and the weight [G, N, K] (one "
              "weight per expert) to have the same K, got "
           << formatShape(x) << " and " << formatShape(w);
  int64_t k = ShapedType::isDynamic(x[1]) ? w[2] : x[1];
  std::array<int64_t, 4> mgnk = {x[0], w[0], w[1], k};
  if (failed(expectShape(op, "group_index", groupIndex, {x[0]},
                         "[M] (the expert of each row of the input)")))
    return failure();
  return mgnk;
}

LogicalResult GroupedLinearOp::verify() {
  FailureOr<std::array<int64_t, 4>> mgnk =
      verifyGroupedLayer(*this, getInput(), getWeight(), getGroupIndex());
  if (failed(mgnk))
    return failure();
  auto [m, g, n, k] = *mgnk;
  return expectShape(*this, "a result", getResult(), {m, n}, "[M, N]");
}

LogicalResult GroupedLinearBackwardOp::verify() {
  FailureOr<std::array<int64_t, 4>> mgnk =
      verifyGroupedLayer(*this, getInput(), getWeight(), getGroupIndex());
  if (failed(mgnk))
    return failure();
  auto [m, g, n, k] = *mgnk;
  if (failed(expectShape(*this, "group_sizes", getGroupSizes(), {g},
                         "[G] (the rows of each expert)")) ||
      failed(expectShape(*this, "grad_output", getGradOutput(), {m, n},
                         "[M, N]")) ||
      failed(
          expectShape(*this, "grad_input", getGradInput(), {m, k}, "[M, K]")) ||
      failed(expectShape(*this, "grad_weight", getGradWeight(), {g, n, k},
                         "[G, N, K]")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// LinearOp, LinearBackwardOp
//===----------------------------------------------------------------------===//

/// Checks what the forward and backward of a linear layer share: X `[M, K]`
/// and W `[N, K]` agree on K, and scale operands come exactly with delayed
/// scaling (`numScales` of `expectedScales` present). Returns {M, N, K}.
static FailureOr<std::array<int64_t, 3>>
verifyLinearLayer(Operation *op, Value input, Value weight,
                  RecipeAttrInterface recipe, unsigned numScales,
                  unsigned expectedScales) {
  // The input and the weight agree on K: checked before the generic
  // verification (verifyBeforeInvariants in FP8Contract.cpp).
  ArrayRef<int64_t> x = getShapedType(input).getShape();
  ArrayRef<int64_t> w = getShapedType(weight).getShape();
  bool isDelayed = isa<DelayedScalingAttr>(recipe);
  if (isDelayed && numScales != expectedScales)
    return op->emitOpError()
           << "delayed scaling requires `scales(...)`: the previous step's "
              "scale of each quantized tensor ("
           << expectedScales << " operands)";
  // Current scaling may take its per-tensor scales computed outside (the
  // whole tensor's, from an amax max-all-reduced over a device group).
  bool isCurrent = isa<CurrentScalingAttr>(recipe);
  if (isCurrent && numScales != 0 && numScales != expectedScales)
    return op->emitOpError()
           << "current scaling takes all its scales (`scales(...)`, "
           << expectedScales << " operands) or none, got " << numScales;
  if (!isDelayed && !isCurrent && numScales != 0)
    return op->emitOpError()
           << "scale operands are only accepted under "
              "per-tensor (delayed or current) scaling; "
              "recipe "
           << Attribute(recipe) << " computes its scales from the data";
  int64_t k = ShapedType::isDynamic(x[1]) ? w[1] : x[1];
  return std::array<int64_t, 3>{x[0], w[0], k};
}

static LogicalResult verifyLinearAmaxResults(Operation *op,
                                             RecipeAttrInterface recipe,
                                             bool hasAmax) {
  if (hasAmax && !isa<DelayedScalingAttr>(recipe))
    return op->emitOpError() << "amax results are only produced under delayed "
                                "scaling (to record into the amax history)";
  return success();
}

LogicalResult LinearOp::verify() {
  unsigned numScales = !!getInputScale() + !!getWeightScale();
  FailureOr<std::array<int64_t, 3>> mnk =
      verifyLinearLayer(*this, getInput(), getWeight(), getRecipe(), numScales,
                        /*expectedScales=*/2);
  if (failed(mnk))
    return failure();
  auto [m, n, k] = *mnk;
  if (!getAmaxes().empty() && getAmaxes().size() != 2)
    return emitOpError() << "expected no amax results or two (the input's and "
                            "the weight's), got "
                         << getAmaxes().size();
  if (failed(verifyLinearAmaxResults(*this, getRecipe(),
                                     static_cast<bool>(getInputAmax()))))
    return failure();
  ArrayRef<int64_t> y = getShapedType(getResult()).getShape();
  if (!isCompatibleShape(y, {m, n}))
    return emitOpError() << "expected a result of shape [M, N] = "
                         << formatShape({m, n}) << ", got " << formatShape(y);
  if (Value bias = getBias())
    if (!isCompatibleShape(getShapedType(bias).getShape(), {n}))
      return emitOpError() << "expected a bias of shape [N] = "
                           << formatShape({n}) << ", got "
                           << formatShape(getShapedType(bias).getShape());
  return success();
}

LogicalResult LinearBackwardOp::verify() {
  unsigned numScales =
      !!getInputScale() + !!getWeightScale() + !!getGradOutputScale();
  FailureOr<std::array<int64_t, 3>> mnk =
      verifyLinearLayer(*this, getInput(), getWeight(), getRecipe(), numScales,
                        /*expectedScales=*/3);
  if (failed(mnk))
    return failure();
  auto [m, n, k] = *mnk;
  if (failed(verifyLinearAmaxResults(*this, getRecipe(),
                                     static_cast<bool>(getGradOutputAmax()))))
    return failure();
  ArrayRef<int64_t> dy = getShapedType(getGradOutput()).getShape();
  if (!isCompatibleShape(dy, {m, n}))
    return emitOpError() << "expected grad_output of shape [M, N] = "
                         << formatShape({m, n}) << ", got " << formatShape(dy);
  ArrayRef<int64_t> dx = getShapedType(getGradInput()).getShape();
  if (!isCompatibleShape(dx, {m, k}))
    return emitOpError() << "expected grad_input of shape [M, K] = "
                         << formatShape({m, k}) << ", got " << formatShape(dx);
  ArrayRef<int64_t> dw = getShapedType(getGradWeight()).getShape();
  if (!isCompatibleShape(dw, {n, k}))
    return emitOpError() << "expected grad_weight of shape [N, K] = "
                         << formatShape({n, k}) << ", got " << formatShape(dw);
  if (Value acc = getAccumulateInto())
    if (acc.getType() != getGradWeight().getType())
      return emitOpError()
             << "expected grad_weight to have the accumulate_into type "
             << acc.getType() << " (the main gradient accumulates in f32), got "
             << getGradWeight().getType();
  return success();
}

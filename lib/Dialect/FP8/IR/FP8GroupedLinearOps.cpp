//===- FP8GroupedLinearOps.cpp - fp8.grouped_linear(_backward) ------------===//
//
// The verifiers of the expert (grouped) linear layer: the shapes of the
// tokens, the per-expert weights and the two forms of the experts' rows.
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Contract.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "ShapeCompatibility.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::fp8;

using contract::formatShape;
using mlir::fp8::detail::isCompatibleShape;

static ArrayRef<int64_t> getShape(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
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
verifyGroupedLayer(Operation *op, Value input, Value weight,
                   Value groupIndex) {
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
      failed(expectShape(*this, "grad_input", getGradInput(), {m, k},
                         "[M, K]")) ||
      failed(expectShape(*this, "grad_weight", getGradWeight(), {g, n, k},
                         "[G, N, K]")))
    return failure();
  return success();
}

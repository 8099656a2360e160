//===- DecomposeQuantize.cpp - Two-pass current scaling -------------------===//
//
// Splits the quantizations that no single kernel computes: per-tensor
// current scaling (amax first), and row-granularity quantizations with both
// outputs (one cast per output).
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8DECOMPOSEQUANTIZE
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
/// quantize(x) {current, tensor} -> quantize(x, scale(amax(x))).
struct DecomposeFusedCurrentScaling : public OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getScale() || !isa<CurrentScalingAttr>(op.getRecipe()) ||
        !op.getGranularity().isTensor())
      return failure();
    Location loc = op.getLoc();
    auto scalarType = RankedTensorType::get({}, rewriter.getF32Type());
    Value amax = AmaxOp::create(rewriter, loc, scalarType, op.getInput());
    Value data = op.getRowwise() ? op.getRowwise() : op.getColumnwise();
    Type elementType = cast<RankedTensorType>(data.getType()).getElementType();
    auto scale = ComputeScaleOp::create(
        rewriter, loc, scalarType, scalarType, /*next_history=*/Type(), amax,
        /*previous_scale=*/Value(), op.getRecipe(), elementType);
    auto typeOf = [](Value v) { return v ? v.getType() : Type(); };
    auto cast = QuantizeOp::create(
        rewriter, loc, typeOf(op.getRowwise()), typeOf(op.getRowwiseScaleInv()),
        typeOf(op.getColumnwise()), typeOf(op.getColumnwiseScaleInv()),
        /*amax=*/Type(), op.getInput(), scale.getScale(), op.getRecipe(),
        op.getGranularity(), op.getColumnwiseLayout(),
        op.getScaleGranularityAttr());
    SmallVector<Value> replacements;
    if (op.getRowwise())
      replacements.append({cast.getRowwise(), cast.getRowwiseScaleInv()});
    if (op.getColumnwise())
      replacements.append({cast.getColumnwise(), cast.getColumnwiseScaleInv()});
    if (op.getAmax())
      replacements.push_back(amax);
    rewriter.replaceOp(op, replacements);
    return success();
  }
};

/// A row-granularity quantize with both outputs -> one quantize per output.
/// The rows of x and those of x^T (its columns) each take a pass over the
/// whole tensor for their maxima; the two casts share nothing but the input.
struct SplitRowGranularityOutputs : public OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getGranularity().isRow() || !op.getRowwise() ||
        !op.getColumnwise())
      return failure();
    Location loc = op.getLoc();
    auto rowwise = QuantizeOp::create(
        rewriter, loc, op.getRowwise().getType(),
        op.getRowwiseScaleInv().getType(), /*columnwise=*/Type(),
        /*columnwise_scale_inv=*/Type(), /*amax=*/Type(), op.getInput(),
        op.getScale(), op.getRecipe(), op.getGranularity(),
        op.getColumnwiseLayout(), op.getScaleGranularityAttr());
    auto columnwise = QuantizeOp::create(
        rewriter, loc, /*rowwise=*/Type(), /*rowwise_scale_inv=*/Type(),
        op.getColumnwise().getType(), op.getColumnwiseScaleInv().getType(),
        /*amax=*/Type(), op.getInput(), op.getScale(), op.getRecipe(),
        op.getGranularity(), op.getColumnwiseLayout(),
        op.getScaleGranularityAttr());
    rewriter.replaceOp(op, {rowwise.getRowwise(), rowwise.getRowwiseScaleInv(),
                            columnwise.getColumnwise(),
                            columnwise.getColumnwiseScaleInv()});
    return success();
  }
};

struct DecomposeQuantizePass
    : public fp8::impl::FP8DecomposeQuantizeBase<DecomposeQuantizePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeQuantizePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::fp8::populateDecomposeQuantizePatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeFusedCurrentScaling, SplitRowGranularityOutputs>(
      patterns.getContext());
}

//===- FuseScales.cpp - Fold scale application into scaled_matmul ---------===//

#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8FUSESCALES
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

/// Whether `init` is a tensor filled with +0.0 (so the matmul adds nothing).
static bool isZeroFilled(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return false;
  APFloat value(0.0);
  return matchPattern(fill.value(), m_ConstantFloat(&value)) &&
         value.isPosZero();
}

/// The major of a matmul operand whose indexing map is `map` over (m, n, k):
/// K-major when K is the inner dimension. `mnDim` is m for A and n for B.
static std::optional<OperandMajor> getMajor(AffineMap map, unsigned mnDim) {
  MLIRContext *ctx = map.getContext();
  AffineExpr mn = getAffineDimExpr(mnDim, ctx), k = getAffineDimExpr(2, ctx);
  if (map == AffineMap::get(3, 0, {mn, k}, ctx))
    return OperandMajor::K;
  if (map == AffineMap::get(3, 0, {k, mn}, ctx))
    return OperandMajor::MN;
  return std::nullopt;
}

/// Whether the dequantize scales of an operand stored with `major` mean the
/// same as a scaled_matmul's logical scales: per tensor always; otherwise
/// only K-major operands, whose stored rows are the logical ones.
static bool scalesCarryOver(GranularityAttr granularity, OperandMajor major) {
  return granularity.isTensor() || major == OperandMajor::K;
}

/// Whether the scaled_matmul kernels take the pair of scale granularities.
static bool isSupportedScalePair(GranularityAttr a, GranularityAttr b) {
  if (a.isEpilogueScaled() && b.isEpilogueScaled())
    return true;
  if (a.isMX() && b.isMX())
    return true;
  return a.isTile() && b.isTile() && a.getTile().rows == 1 &&
         a.getTile().cols == b.getTile().cols;
}

namespace {
/// linalg.matmul(dequantize(qa, sa), dequantize(qb, sb)) into zeros
///   -> fp8.scaled_matmul qa, qb, sa, sb.
struct FuseDequantizeMatmul : OpRewritePattern<linalg::MatmulOp> {
  FuseDequantizeMatmul(MLIRContext *ctx, bool fastAccumulation)
      : OpRewritePattern(ctx), fastAccumulation(fastAccumulation) {}

  LogicalResult matchAndRewrite(linalg::MatmulOp matmul,
                                PatternRewriter &rewriter) const override {
    if (!matmul.hasPureTensorSemantics() || matmul.getInputs().size() != 2)
      return rewriter.notifyMatchFailure(matmul, "expected a tensor matmul");
    auto lhs = matmul.getInputs()[0].getDefiningOp<DequantizeOp>();
    auto rhs = matmul.getInputs()[1].getDefiningOp<DequantizeOp>();
    if (!lhs || !rhs)
      return rewriter.notifyMatchFailure(matmul,
                                         "operands are not dequantized FP8");
    auto resultType = cast<RankedTensorType>(matmul.getResult(0).getType());
    // A zero-filled init adds nothing; any other f32 init is accumulated
    // into (the wgrad form, dW += dY^T X).
    Value init = matmul.getOutputs()[0];
    Value c;
    if (!isZeroFilled(init)) {
      if (!resultType.getElementType().isF32())
        return rewriter.notifyMatchFailure(
            matmul, "non-zero init with a result other than f32");
      c = init;
    }
    if (!resultType.getElementType().isBF16() &&
        !resultType.getElementType().isF16() &&
        !resultType.getElementType().isF32())
      return rewriter.notifyMatchFailure(matmul, "result not bf16/f16/f32");

    SmallVector<AffineMap> maps = matmul.getIndexingMapsArray();
    MLIRContext *ctx = getContext();
    if (maps[2] != AffineMap::get(3, 0,
                                  {getAffineDimExpr(0, ctx),
                                   getAffineDimExpr(1, ctx)},
                                  ctx))
      return rewriter.notifyMatchFailure(matmul, "transposed output");
    std::optional<OperandMajor> aMajor = getMajor(maps[0], /*mnDim=*/0);
    std::optional<OperandMajor> bMajor = getMajor(maps[1], /*mnDim=*/1);
    if (!aMajor || !bMajor)
      return rewriter.notifyMatchFailure(matmul, "unsupported indexing maps");

    GranularityAttr aGranularity = lhs.getGranularity();
    GranularityAttr bGranularity = rhs.getGranularity();
    if (!scalesCarryOver(aGranularity, *aMajor) ||
        !scalesCarryOver(bGranularity, *bMajor))
      return rewriter.notifyMatchFailure(
          matmul, "block scales across K of an MN-major operand");
    if (!isSupportedScalePair(aGranularity, bGranularity))
      return rewriter.notifyMatchFailure(matmul, "unsupported scale pair");

    Accumulation accumulation = Accumulation::promoted(128);
    if (aGranularity.isTile())
      accumulation = Accumulation::promoted(aGranularity.getTile().cols);
    else if (aGranularity.isMX() || fastAccumulation)
      accumulation = Accumulation::fast();

    rewriter.replaceOpWithNewOp<ScaledMatmulOp>(
        matmul, resultType, lhs.getInput(), rhs.getInput(),
        lhs.getScaleInv(), rhs.getScaleInv(), /*bias=*/Value(), c,
        /*out=*/Value(), aGranularity, bGranularity, *aMajor, *bMajor,
        AccumulationAttr::get(ctx, accumulation),
        /*recipe=*/RecipeAttrInterface(), /*config=*/GemmConfigAttr());
    return success();
  }

  bool fastAccumulation;
};

/// arith.addf(scaled_matmul -> f32, broadcast(bias[N]) along M)
///   -> scaled_matmul ... bias: the kernel adds the bias in f32 after the
/// scales, exactly what the f32 graph computes.
struct FuseBiasAdd : OpRewritePattern<arith::AddFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::AddFOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [lhs, rhs] : {std::pair(add.getLhs(), add.getRhs()),
                            std::pair(add.getRhs(), add.getLhs())}) {
      auto matmul = lhs.getDefiningOp<ScaledMatmulOp>();
      auto broadcast = rhs.getDefiningOp<linalg::BroadcastOp>();
      if (!matmul || !broadcast || !matmul.getResult() ||
          !matmul.getResult().hasOneUse() || matmul.getBias() ||
          matmul.getC())
        continue;
      auto resultType = cast<RankedTensorType>(matmul.getResult().getType());
      Value bias = broadcast.getInput();
      auto biasType = dyn_cast<RankedTensorType>(bias.getType());
      if (!resultType.getElementType().isF32() || !biasType ||
          biasType.getRank() != 1 || !biasType.getElementType().isF32() ||
          broadcast.getDimensions() != ArrayRef<int64_t>{0} ||
          add.getType() != resultType)
        continue;
      // The bias operand is [N] (bf16 or f32); the broadcast's result is the
      // matmul's shape (the add verifies that).
      rewriter.modifyOpInPlace(matmul,
                               [&] { matmul.getBiasMutable().assign(bias); });
      rewriter.replaceOp(add, matmul.getResult());
      return success();
    }
    return rewriter.notifyMatchFailure(add, "not scaled_matmul + bias[N]");
  }
};

/// arith.truncf(scaled_matmul -> f32) to bf16/f16 -> scaled_matmul -> bf16/
/// f16: the kernel rounds its f32 result once, to nearest even, as truncf
/// does.
struct FuseOutputCast : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp cast,
                                PatternRewriter &rewriter) const override {
    auto matmul = cast.getIn().getDefiningOp<ScaledMatmulOp>();
    if (!matmul || !matmul.getResult() || !matmul.getResult().hasOneUse() ||
        matmul.getC())
      return rewriter.notifyMatchFailure(cast, "not a scaled_matmul result");
    if (cast.getRoundingmodeAttr() &&
        cast.getRoundingmode() != arith::RoundingMode::to_nearest_even)
      return rewriter.notifyMatchFailure(cast, "not round-to-nearest-even");
    auto resultType = dyn_cast<RankedTensorType>(cast.getType());
    if (!resultType || !(resultType.getElementType().isBF16() ||
                         resultType.getElementType().isF16()))
      return rewriter.notifyMatchFailure(cast, "not a cast to bf16/f16");
    rewriter.modifyOpInPlace(
        matmul, [&] { matmul.getResult().setType(resultType); });
    rewriter.replaceOp(cast, matmul.getResult());
    return success();
  }
};

struct FuseScalesPass : public fp8::impl::FP8FuseScalesBase<FuseScalesPass> {
  using FP8FuseScalesBase::FP8FuseScalesBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseDequantizeMatmul>(&getContext(), fastAccumulation);
    patterns.add<FuseBiasAdd, FuseOutputCast>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

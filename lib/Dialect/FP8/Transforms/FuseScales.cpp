//===- FuseScales.cpp - Fold scale application into scaled_matmul ---------===//

#include "FP8/Conversion/FP8ToGPU/KernelContract.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/IR/FP8Target.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8FUSESCALES
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

/// Whether `cast` rounds to nearest even (the default), as the kernels'
/// epilogues round their f32 result.
static bool roundsToNearestEven(arith::TruncFOp cast) {
  return !cast.getRoundingmodeAttr() ||
         cast.getRoundingmode() == arith::RoundingMode::to_nearest_even;
}

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
        matmul, resultType, /*result_scale_inv=*/Type(), /*amax=*/Type(),
        lhs.getInput(), rhs.getInput(), lhs.getScaleInv(), rhs.getScaleInv(),
        /*bias=*/Value(), c, /*result_scale=*/Value(), /*out=*/Value(),
        /*amax_out=*/Value(), aGranularity, bGranularity, *aMajor, *bMajor,
        AccumulationAttr::get(ctx, accumulation),
        /*recipe=*/RecipeAttrInterface(), /*config=*/GemmConfigAttr(),
        /*activation=*/ActivationAttr(),
        /*result_recipe=*/RecipeAttrInterface(),
        /*result_granularity=*/GranularityAttr());
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
          matmul.getC() || matmul.getActivation() || matmul.getAmax())
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
    // (Not after the amax was fused: it is the amax of the unrounded D.)
    if (!matmul || !matmul.getResult() || !matmul.getResult().hasOneUse() ||
        matmul.getC() || matmul.getAmax())
      return rewriter.notifyMatchFailure(cast, "not a scaled_matmul result");
    if (!roundsToNearestEven(cast))
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

} // namespace

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

/// `value` as a product `coefficient * factors[0] * factors[1] * ...`: the
/// leaves of a tree of arith.mulf, arith.divf by a constant and arith.negf,
/// with every constant folded into the coefficient, so that any association
/// and order of a product matches.
namespace {
struct Product {
  double coefficient = 1.0;
  SmallVector<Value> factors;
};
} // namespace

static std::optional<double> getConstant(Value v) {
  APFloat value(0.0f);
  if (!matchPattern(v, m_ConstantFloat(&value)))
    return std::nullopt;
  return value.convertToDouble();
}

static void collectProduct(Value v, Product &p) {
  if (std::optional<double> c = getConstant(v)) {
    p.coefficient *= *c;
    return;
  }
  if (auto mul = v.getDefiningOp<arith::MulFOp>()) {
    collectProduct(mul.getLhs(), p);
    collectProduct(mul.getRhs(), p);
    return;
  }
  if (auto div = v.getDefiningOp<arith::DivFOp>()) {
    if (std::optional<double> c = getConstant(div.getRhs()); c && *c != 0.0) {
      p.coefficient /= *c;
      collectProduct(div.getLhs(), p);
      return;
    }
  }
  if (auto neg = v.getDefiningOp<arith::NegFOp>()) {
    p.coefficient = -p.coefficient;
    collectProduct(neg.getOperand(), p);
    return;
  }
  p.factors.push_back(v);
}

static bool isNear(double actual, double expected) {
  // The constants are f32 literals of the exact values.
  return std::abs(actual - expected) <= 1e-6 * std::abs(expected);
}

/// Whether `v` is `coefficient * x^power`.
static bool isMonomial(Value v, Value x, double coefficient, unsigned power) {
  Product p;
  collectProduct(v, p);
  return isNear(p.coefficient, coefficient) && p.factors.size() == power &&
         llvm::all_of(p.factors, [&](Value f) { return f == x; });
}

/// The `y` of `v = 1 + y` (either order), or null.
static Value matchOnePlus(Value v) {
  auto add = v.getDefiningOp<arith::AddFOp>();
  if (!add)
    return Value();
  for (auto [one, other] : {std::pair(add.getLhs(), add.getRhs()),
                            std::pair(add.getRhs(), add.getLhs())})
    if (std::optional<double> c = getConstant(one); c && *c == 1.0)
      return other;
  return Value();
}

/// Whether `v` is `1 + exp(-x)`.
static bool isOnePlusExpNegX(Value v, Value x) {
  Value e = matchOnePlus(v);
  auto exp = e ? e.getDefiningOp<math::ExpOp>() : math::ExpOp();
  return exp && isMonomial(exp.getOperand(), x, -1.0, 1);
}

/// The activation `y` computes from `x`, in one of these forms (any order
/// and association of products; constants as f32 literals):
///   silu:      x / (1 + exp(-x)),  x * (1 / (1 + exp(-x)))
///   gelu:      0.5 * x * (1 + erf(x * 0.70710678))       (or x / sqrt(2))
///   gelu_tanh: 0.5 * x * (1 + tanh(0.79788456 * (x + 0.044715 * x*x*x)))
static std::optional<Activation> matchActivation(Value y, Value x) {
  if (auto div = y.getDefiningOp<arith::DivFOp>();
      div && div.getLhs() == x && isOnePlusExpNegX(div.getRhs(), x))
    return Activation::SiLU;
  Product p;
  collectProduct(y, p);
  if (p.factors.size() != 2)
    return std::nullopt;
  for (auto [first, second] : {std::pair(p.factors[0], p.factors[1]),
                               std::pair(p.factors[1], p.factors[0])}) {
    if (first != x)
      continue;
    if (isNear(p.coefficient, 1.0)) {
      auto reciprocal = second.getDefiningOp<arith::DivFOp>();
      std::optional<double> one =
          reciprocal ? getConstant(reciprocal.getLhs()) : std::nullopt;
      if (one && *one == 1.0 && isOnePlusExpNegX(reciprocal.getRhs(), x))
        return Activation::SiLU;
      continue;
    }
    if (!isNear(p.coefficient, 0.5))
      continue;
    Value inner = matchOnePlus(second);
    if (!inner)
      continue;
    if (auto erf = inner.getDefiningOp<math::ErfOp>();
        erf && isMonomial(erf.getOperand(), x, M_SQRT1_2, 1))
      return Activation::GELU;
    if (auto tanh = inner.getDefiningOp<math::TanhOp>()) {
      Product arg;
      collectProduct(tanh.getOperand(), arg);
      if (!isNear(arg.coefficient, std::sqrt(2.0 / M_PI)) ||
          arg.factors.size() != 1)
        continue;
      auto sum = arg.factors[0].getDefiningOp<arith::AddFOp>();
      if (!sum)
        continue;
      for (auto [linear, cubic] : {std::pair(sum.getLhs(), sum.getRhs()),
                                   std::pair(sum.getRhs(), sum.getLhs())})
        if (linear == x && isMonomial(cubic, x, 0.044715, 3))
          return Activation::GELUTanh;
    }
  }
  return std::nullopt;
}

namespace {
/// linalg.generic computing an activation of each element of an f32
/// scaled_matmul result (what convert-elementwise-to-linalg and
/// linalg-fuse-elementwise-ops make of the elementwise ops), optionally
/// rounded (RNE) to bf16/f16 -> scaled_matmul with that activation (and
/// result type): the kernel evaluates the same function in f32 in its
/// epilogue, after the scales and bias.
struct FuseActivation : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp generic,
                                PatternRewriter &rewriter) const override {
    if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
        generic.getNumReductionLoops() != 0 ||
        !llvm::all_of(generic.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      return rewriter.notifyMatchFailure(generic, "not elementwise unary");
    auto matmul =
        generic.getDpsInputs()[0].getDefiningOp<ScaledMatmulOp>();
    if (!matmul || !matmul.getResult() || matmul.getC() ||
        matmul.getActivation() || matmul.getAmax() ||
        !matmul.getOutputType().getElementType().isF32())
      return rewriter.notifyMatchFailure(generic, "not an f32 scaled_matmul");
    // Nothing else reads the result (it may also be the generic's init, if
    // the body ignores the init's values).
    Block &body = generic.getRegion().front();
    if (!llvm::all_of(matmul.getResult().getUsers(),
                      [&](Operation *user) { return user == generic; }) ||
        !body.getArgument(1).use_empty())
      return rewriter.notifyMatchFailure(generic, "result used elsewhere");
    Value x = body.getArgument(0);
    Value y = body.getTerminator()->getOperand(0);
    auto resultType = cast<RankedTensorType>(generic.getResultTypes()[0]);
    Type elementType = resultType.getElementType();
    if (auto cast = y.getDefiningOp<arith::TruncFOp>()) {
      if (!roundsToNearestEven(cast))
        return rewriter.notifyMatchFailure(generic, "not RNE");
      y = cast.getIn();
    }
    if (!(elementType.isF32() || elementType.isBF16() || elementType.isF16()) ||
        !y.getType().isF32())
      return rewriter.notifyMatchFailure(generic, "unsupported result type");
    std::optional<Activation> activation = matchActivation(y, x);
    if (!activation)
      return rewriter.notifyMatchFailure(generic, "not a known activation");
    rewriter.modifyOpInPlace(matmul, [&] {
      matmul.setActivation(*activation);
      matmul.getResult().setType(resultType);
    });
    rewriter.replaceOp(generic, matmul.getResult());
    return success();
  }
};

/// D * s for an f32 scaled_matmul result D and s a linalg.broadcast of a
/// scalar (to [M, N]), of a per-row vector [M] (along N) or of a per-column
/// vector [N] (along M) -> the same op with that factor folded into A's
/// (scalar, rows) or B's (columns) tensor/row scales: the kernels multiply
/// those in the epilogue, so no separate scale op is left. Only before a
/// bias, activation or amax is fused (they would see the unscaled D).
struct FuseOutputScale : OpRewritePattern<arith::MulFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::MulFOp mul,
                                PatternRewriter &rewriter) const override {
    for (auto [lhs, rhs] : {std::pair(mul.getLhs(), mul.getRhs()),
                            std::pair(mul.getRhs(), mul.getLhs())}) {
      auto matmul = lhs.getDefiningOp<ScaledMatmulOp>();
      auto broadcast = rhs.getDefiningOp<linalg::BroadcastOp>();
      if (!matmul || !broadcast || !matmul.getResult() ||
          !matmul.getResult().hasOneUse() || matmul.getBias() ||
          matmul.getC() || matmul.getActivation() || matmul.getAmax() ||
          !matmul.getOutputType().getElementType().isF32() ||
          !matmul.getAGranularity().isEpilogueScaled() ||
          !matmul.getBGranularity().isEpilogueScaled() ||
          mul.getType() != matmul.getResult().getType())
        continue;
      Value factor = broadcast.getInput();
      auto factorType = dyn_cast<RankedTensorType>(factor.getType());
      if (!factorType || !factorType.getElementType().isF32())
        continue;
      ArrayRef<int64_t> dims = broadcast.getDimensions();
      bool scalar = factorType.getRank() == 0;
      bool perRow = factorType.getRank() == 1 && dims == ArrayRef<int64_t>{1};
      bool perColumn =
          factorType.getRank() == 1 && dims == ArrayRef<int64_t>{0};
      if (!scalar && !perRow && !perColumn)
        continue;
      // The new scales are computed before the matmul, from a factor that
      // must already exist there.
      if (!DominanceInfo(matmul->getParentOp())
               .properlyDominates(factor, matmul))
        continue;
      rewriter.setInsertionPoint(matmul);
      // Scalars and rows scale A (tensor -> row for a row factor), columns
      // scale B (its per-row scales are D's columns).
      bool onA = !perColumn;
      Value scale = onA ? matmul.getAScaleInv() : matmul.getBScaleInv();
      GranularityAttr g =
          onA ? matmul.getAGranularity() : matmul.getBGranularity();
      Value scaled =
          multiplyScale(rewriter, matmul.getLoc(), scale, g, factor);
      GranularityAttr newG =
          scalar ? g : GranularityAttr::getRow(getContext());
      rewriter.modifyOpInPlace(matmul, [&] {
        if (onA) {
          matmul.getAScaleInvMutable().assign(scaled);
          matmul.setAGranularityAttr(newG);
        } else {
          matmul.getBScaleInvMutable().assign(scaled);
          matmul.setBGranularityAttr(newG);
        }
      });
      rewriter.replaceOp(mul, matmul.getResult());
      return success();
    }
    return rewriter.notifyMatchFailure(mul, "not scaled_matmul * scale");
  }

  /// `scale` (tensor<f32> or [R, 1] row scales) times `factor` (tensor<f32>,
  /// or [R] per row): tensor<f32> for two scalars, [R, 1] otherwise.
  static Value multiplyScale(PatternRewriter &rewriter, Location loc,
                             Value scale, GranularityAttr g, Value factor) {
    auto factorType = cast<RankedTensorType>(factor.getType());
    if (g.isTensor() && factorType.getRank() == 0)
      return arith::MulFOp::create(rewriter, loc, scale, factor);
    MLIRContext *ctx = rewriter.getContext();
    // The [R, 1] result; R from whichever operand is a vector.
    Value rowsOf = factorType.getRank() == 1 ? factor : scale;
    OpFoldResult rows = tensor::getMixedSize(rewriter, loc, rowsOf, 0);
    Value init = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{rows, rewriter.getIndexAttr(1)},
        rewriter.getF32Type());
    AffineExpr r, c;
    bindDims(ctx, r, c);
    auto mapOf = [&](Value v) {
      int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
      SmallVector<AffineExpr> exprs;
      if (rank >= 1)
        exprs.push_back(r);
      if (rank == 2)
        exprs.push_back(c);
      return AffineMap::get(2, 0, exprs, ctx);
    };
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init.getType(), ValueRange{scale, factor}, init,
        ArrayRef<AffineMap>{mapOf(scale), mapOf(factor),
                            rewriter.getMultiDimIdentityMap(2)},
        ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                      utils::IteratorType::parallel},
        [](OpBuilder &b, Location loc, ValueRange args) {
          linalg::YieldOp::create(
              b, loc, arith::MulFOp::create(b, loc, args[0], args[1]).getResult());
        });
    return generic.getResult(0);
  }
};

/// fp8.quantize(f32 scaled_matmul result), rowwise only -> the op's FP8
/// result: the epilogue quantizes the f32 values of D itself (or the
/// lowering splits it in two phases), so D is never written in high
/// precision. Exact only for an f32 D: a bf16/f16 D would be quantized
/// after its own rounding, which the fused op skips, so it is left alone.
/// The quantize's amax (of its input) is the op's amax of an FP8 D.
struct FuseOutputQuantize : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeOp quantize,
                                PatternRewriter &rewriter) const override {
    auto matmul = quantize.getInput().getDefiningOp<ScaledMatmulOp>();
    if (!matmul || matmul.hasBufferSemantics() || matmul.getC() ||
        !matmul.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(quantize, "not the single use of a "
                                                   "scaled_matmul result");
    if (!matmul.getOutputType().getElementType().isF32())
      return rewriter.notifyMatchFailure(
          quantize, "D is rounded before the quantization (not f32)");
    if (!quantize.getRowwise() || quantize.getColumnwise() ||
        quantize.getScaleGranularityAttr() ||
        (quantize.getAmax() && matmul.getAmax()))
      return rewriter.notifyMatchFailure(
          quantize, "not a plain rowwise quantization of D");
    Value amax = quantize.getAmax() ? quantize.getAmax() : matmul.getAmax();
    rewriter.setInsertionPoint(quantize);
    auto fused = ScaledMatmulOp::create(
        rewriter, matmul.getLoc(), quantize.getRowwise().getType(),
        quantize.getRowwiseScaleInv().getType(),
        amax ? amax.getType() : Type(), matmul.getA(), matmul.getB(),
        matmul.getAScaleInv(), matmul.getBScaleInv(), matmul.getBias(),
        /*c=*/Value(), quantize.getScale(), /*out=*/Value(),
        /*amax_out=*/Value(), matmul.getAGranularity(),
        matmul.getBGranularity(), matmul.getAMajorAttr(),
        matmul.getBMajorAttr(), matmul.getAccumulation(),
        matmul.getRecipeAttr(), matmul.getConfigAttr(),
        matmul.getActivationAttr(), quantize.getRecipe(),
        quantize.getGranularity());
    if (matmul.getAmax())
      rewriter.replaceAllUsesWith(matmul.getAmax(), fused.getAmax());
    SmallVector<Value> replacements = {fused.getResult(),
                                       fused.getResultScaleInv()};
    if (quantize.getAmax())
      replacements.push_back(fused.getAmax());
    rewriter.replaceOp(quantize, replacements);
    rewriter.eraseOp(matmul);
    return success();
  }
};

/// fp8.quantize(f32 grouped_scaled_matmul result) -> the grouped op's FP8
/// result, for the quantizations its kernels compute in the epilogue
/// (groupedKernelsQuantizeResult: per tensor with a given scale, and 1x128
/// blocks along N of an m_contiguous D; not on chips or layouts whose
/// grouped kernels write no FP8 result). Rows the layout does not write
/// (padding, past a group's count) are undefined in the f32 D, so their
/// quantized values are too, and stay unwritten; an amax would read them:
/// not folded, nor are the quantizations whose scales reduce over rows (the
/// grouped op takes none of them).
struct FuseGroupedOutputQuantize : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeOp quantize,
                                PatternRewriter &rewriter) const override {
    auto matmul = quantize.getInput().getDefiningOp<GroupedScaledMatmulOp>();
    if (!matmul || !matmul.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(
          quantize, "not the single use of a grouped_scaled_matmul result");
    if (!matmul.getResult().getType().getElementType().isF32())
      return rewriter.notifyMatchFailure(
          quantize, "D is rounded before the quantization (not f32)");
    // No target yet: what the kernels of any chip compute.
    const ChipInfo *chip = nullptr;
    if (lookupTarget(matmul)) {
      FailureOr<TargetInfo> target = getTarget(matmul);
      if (failed(target))
        return rewriter.notifyMatchFailure(quantize, "no valid #fp8.target");
      chip = &target->chip;
    }
    if (!quantize.getRowwise() || quantize.getColumnwise() ||
        quantize.getScaleGranularityAttr() || quantize.getAmax())
      return rewriter.notifyMatchFailure(
          quantize, "not a plain rowwise quantization of D without amax");
    GranularityAttr g = quantize.getGranularity();
    if (!groupedKernelsQuantizeResult(matmul.getLayout(), chip,
                                      quantize.getRecipe(), g,
                                      static_cast<bool>(quantize.getScale())))
      return rewriter.notifyMatchFailure(
          quantize, "the grouped kernels of this chip and layout do not "
                    "compute this quantization in the epilogue");
    // Blocks of a row: fp8.quantize takes them of a 2-D input only, the
    // m_contiguous D (an m_masked D is [G, M, N]).
    if (!g.isTensor() && matmul.getLayout() != GroupedLayout::MContiguous)
      return rewriter.notifyMatchFailure(
          quantize, "1x128 blocks of an m_contiguous D only");
    auto fused = GroupedScaledMatmulOp::create(
        rewriter, matmul.getLoc(), quantize.getRowwise().getType(),
        quantize.getRowwiseScaleInv().getType(), matmul.getA(), matmul.getB(),
        matmul.getAScaleInv(), matmul.getBScaleInv(), matmul.getGroups(),
        quantize.getScale(), matmul.getLayoutAttr(),
        matmul.getAGranularityAttr(), matmul.getBGranularityAttr(),
        matmul.getAccumulationAttr(), matmul.getConfigAttr(),
        quantize.getRecipe(), quantize.getGranularity());
    rewriter.replaceOp(quantize, fused.getResults());
    rewriter.eraseOp(matmul);
    return success();
  }
};

/// fp8.amax(scaled_matmul result) -> the op's amax result: the epilogue
/// reduces |D| as it stores D (for current scaling of the next layer), so D
/// is not read again. The result may have other users (the next quantize).
struct FuseOutputAmax : OpRewritePattern<AmaxOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AmaxOp amax,
                                PatternRewriter &rewriter) const override {
    auto matmul = amax.getInput().getDefiningOp<ScaledMatmulOp>();
    if (!matmul || matmul.hasBufferSemantics() || matmul.getAmax() ||
        matmul.getC())
      return rewriter.notifyMatchFailure(amax, "not a scaled_matmul result");
    rewriter.setInsertionPoint(matmul);
    auto fused = ScaledMatmulOp::create(
        rewriter, matmul.getLoc(), matmul.getResult().getType(),
        /*result_scale_inv=*/Type(), amax.getType(), matmul.getA(),
        matmul.getB(), matmul.getAScaleInv(), matmul.getBScaleInv(),
        matmul.getBias(), /*c=*/Value(), /*result_scale=*/Value(),
        /*out=*/Value(), /*amax_out=*/Value(), matmul.getAGranularity(),
        matmul.getBGranularity(), matmul.getAMajorAttr(),
        matmul.getBMajorAttr(), matmul.getAccumulation(),
        matmul.getRecipeAttr(), matmul.getConfigAttr(),
        matmul.getActivationAttr(), /*result_recipe=*/RecipeAttrInterface(),
        /*result_granularity=*/GranularityAttr());
    rewriter.replaceOp(amax, fused.getAmax());
    rewriter.replaceOp(matmul, fused.getResult());
    return success();
  }
};

struct FuseScalesPass : public fp8::impl::FP8FuseScalesBase<FuseScalesPass> {
  using FP8FuseScalesBase::FP8FuseScalesBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseScalesPatterns(patterns, fastAccumulation);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::fp8::populateFuseScalesPatterns(RewritePatternSet &patterns,
                                           bool fastAccumulation) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<FuseDequantizeMatmul>(ctx, fastAccumulation);
  patterns.add<FuseOutputScale, FuseBiasAdd, FuseOutputCast, FuseActivation,
               FuseOutputAmax, FuseOutputQuantize, FuseGroupedOutputQuantize>(
      ctx);
}

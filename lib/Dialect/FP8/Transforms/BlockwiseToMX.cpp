//===- BlockwiseToMX.cpp - Blockwise GEMMs as block-scaled (MX) GEMMs -----===//
//
// Rewrites fp8.scaled_matmul with power-of-two blockwise scales (1xKb and
// RxKb tiles) into the MXFP8 form (1x32 blocks, UE8M0 scales) that
// Blackwell's block-scaled MMA runs, without touching the FP8 data: each
// tile's scale is repeated over the 32-element blocks it covers
// (numerics.md, "Blockwise to MX on Blackwell").
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8BLOCKWISETOMX
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

static constexpr int64_t kMXBlock = 32;

/// The UE8M0 scales `[rows, ceil(k / 32)]` of an operand whose blockwise
/// scales `scale` (logical `[ceil(rows / R), ceil(k / Kb)]`) belong to
/// `tile` = RxKb: element (r, j) is the code of scale (r / R, j / (Kb / 32)).
/// A power-of-two f32 scale's code is its biased exponent field (bits
/// 23..30), which maps NaN and inf to the UE8M0 NaN (0xFF) as well.
static Value convertScales(PatternRewriter &rewriter, Location loc,
                           Value scale, TileShape tile, OpFoldResult rows,
                           int64_t k) {
  MLIRContext *ctx = rewriter.getContext();
  Type e8m0 = Float8E8M0FNUType::get(ctx);
  int64_t mxBlocks = llvm::divideCeil(k, kMXBlock);
  Value init = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{rows, rewriter.getIndexAttr(mxBlocks)},
      e8m0);
  AffineExpr r, j;
  bindDims(ctx, r, j);
  AffineMap input = AffineMap::get(
      2, 0, {r.floorDiv(tile.rows), j.floorDiv(tile.cols / kMXBlock)}, ctx);
  AffineMap output = rewriter.getMultiDimIdentityMap(2);
  bool isF32 = cast<ShapedType>(scale.getType()).getElementType().isF32();
  auto generic = linalg::GenericOp::create(
      rewriter, loc, init.getType(), scale, init,
      ArrayRef<AffineMap>{input, output},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                    utils::IteratorType::parallel},
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value code = args[0];
        if (isF32) {
          Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), code);
          Value exponent = arith::ShRUIOp::create(
              b, loc, bits, arith::ConstantIntOp::create(b, loc, 23, 32));
          Value byte = arith::TruncIOp::create(b, loc, b.getI8Type(), exponent);
          code = arith::BitcastOp::create(b, loc, e8m0, byte);
        }
        linalg::YieldOp::create(b, loc, code);
      });
  return generic.getResult(0);
}

/// Whether `g`'s scales of `scale` are powers of two (so UE8M0 holds them
/// exactly): UE8M0 storage, or f32 under a pow2 blockwise recipe.
static bool hasPowerOfTwoScales(Value scale, RecipeAttrInterface recipe) {
  if (isa<Float8E8M0FNUType>(
          cast<ShapedType>(scale.getType()).getElementType()))
    return true;
  auto blockwise = dyn_cast_or_null<BlockwiseScalingAttr>(recipe);
  return blockwise && blockwise.getScales() == BlockScaleKind::PowerOfTwo;
}

namespace {
struct BlockwiseToMX : public OpRewritePattern<ScaledMatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScaledMatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (op.hasBufferSemantics())
      return rewriter.notifyMatchFailure(op, "expected the tensor form");
    GranularityAttr ga = op.getAGranularity(), gb = op.getBGranularity();
    if (!ga.isTile() || !gb.isTile())
      return rewriter.notifyMatchFailure(op, "expected blockwise scales");
    if (ga.getTile().cols % kMXBlock != 0)
      return rewriter.notifyMatchFailure(op, "tile K extent not a multiple "
                                             "of the MX block");
    RecipeAttrInterface recipe = op.getRecipeAttr();
    if (!hasPowerOfTwoScales(op.getAScaleInv(), recipe) ||
        !hasPowerOfTwoScales(op.getBScaleInv(), recipe))
      return rewriter.notifyMatchFailure(op, "scales may not be powers of two");
    int64_t k = op.getK();
    if (ShapedType::isDynamic(k))
      return rewriter.notifyMatchFailure(op, "expected a static K");

    Location loc = op.getLoc();
    auto extent = [&](Value operand, OperandMajor major) {
      return tensor::getMixedSize(rewriter, loc, operand,
                                  major == OperandMajor::K ? 0 : 1);
    };
    Value sa = convertScales(rewriter, loc, op.getAScaleInv(), ga.getTile(),
                             extent(op.getA(), op.getAMajor()), k);
    Value sb = convertScales(rewriter, loc, op.getBScaleInv(), gb.getTile(),
                             extent(op.getB(), op.getBMajor()), k);
    auto mx = GranularityAttr::getMX(getContext(), kMXBlock);
    rewriter.modifyOpInPlace(op, [&] {
      op.getAScaleInvMutable().assign(sa);
      op.getBScaleInvMutable().assign(sb);
      op.setAGranularityAttr(mx);
      op.setBGranularityAttr(mx);
      // The data were quantized by the blockwise recipe, which does not
      // allow MX scales; the GEMM no longer depends on it.
      op.removeRecipeAttr();
    });
    return success();
  }
};

struct BlockwiseToMXPass
    : public fp8::impl::FP8BlockwiseToMXBase<BlockwiseToMXPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<BlockwiseToMX>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

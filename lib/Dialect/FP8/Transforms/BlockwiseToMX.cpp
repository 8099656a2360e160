//===- BlockwiseToMX.cpp - Blockwise GEMMs as block-scaled (MX) GEMMs -----===//
//
// Rewrites fp8.scaled_matmul with power-of-two blockwise scales (1xKb and
// RxKb tiles) into the MXFP8 form (1x32 blocks, UE8M0 scales) that
// Blackwell's block-scaled MMA runs, without touching the FP8 data: each
// tile's scale is repeated over the 32-element blocks it covers
// (docs/design.md, "Blockwise to MX on Blackwell"). Scales that an
// fp8.quantize of the same function produces are produced in that form by
// the quantization itself (its `scale_granularity`); others are converted
// by an fp8.scales_to_mx.
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/IR/FP8Target.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"
#include "FP8/Target/Chip.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8BLOCKWISETOMX
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

/// The UE8M0 scales `[rows, ceil(k / 32)]` of an operand whose blockwise
/// scales `scale` (logical `[ceil(rows / R), ceil(k / Kb)]`) belong to
/// `tile` = RxKb: an fp8.scales_to_mx (a kernel writing the MX atoms), or
/// the scales themselves when a quantization already wrote them so.
/// `rows` is ShapedType::kDynamic for a run-time extent (1-row tiles only).
static Value convertScales(PatternRewriter &rewriter, Location loc,
                           Value scale, GranularityAttr tile, int64_t rows,
                           int64_t k) {
  // Already in the MX form: written so by the quantization.
  if (auto quantize = scale.getDefiningOp<QuantizeOp>();
      quantize && quantize.getScaleGranularityAttr())
    return scale;
  // With 1-row tiles the scales have R rows themselves.
  auto scaleType = cast<RankedTensorType>(scale.getType());
  if (ShapedType::isDynamic(rows) && tile.getTile().rows == 1)
    rows = scaleType.getDimSize(0);
  auto type = RankedTensorType::get(
      {rows, static_cast<int64_t>(llvm::divideCeil(k, kMXScaleBlock))},
      Float8E8M0FNUType::get(rewriter.getContext()));
  return ScalesToMXOp::create(rewriter, loc, type, scale, tile);
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

/// Why `op` does not run as an MXFP8 GEMM, or null if it does: blockwise
/// tiles on both sides whose K extent is a multiple of the MX block,
/// power-of-two scales, a static K, tensors.
static const char *getMismatch(ScaledMatmulOp op) {
  if (op.hasBufferSemantics())
    return "expected the tensor form";
  GranularityAttr ga = op.getAGranularity(), gb = op.getBGranularity();
  if (!ga.isTile() || !gb.isTile())
    return "expected blockwise scales";
  if (ga.getTile().cols % kMXScaleBlock != 0)
    return "tile K extent not a multiple of the MX block";
  RecipeAttrInterface recipe = op.getRecipeAttr();
  if (!hasPowerOfTwoScales(op.getAScaleInv(), recipe) ||
      !hasPowerOfTwoScales(op.getBScaleInv(), recipe))
    return "scales may not be powers of two";
  if (ShapedType::isDynamic(op.getK()))
    return "expected a static K";
  // fp8.scales_to_mx takes a run-time row count only for 1-row tiles.
  if ((ga.getTile().rows != 1 && ShapedType::isDynamic(op.getM())) ||
      (gb.getTile().rows != 1 && ShapedType::isDynamic(op.getN())))
    return "expected a static extent for the operands of multi-row tiles";
  return nullptr;
}

/// The f8E8M0FNU scale type of `granularity mx 1x32` for a `rows` x `cols`
/// matrix (rows may be dynamic).
static RankedTensorType getMXScaleType(MLIRContext *ctx, int64_t rows,
                                       int64_t cols) {
  int64_t blocks = ShapedType::isDynamic(cols)
                       ? ShapedType::kDynamic
                       : llvm::divideCeil(cols, kMXScaleBlock);
  return RankedTensorType::get({rows, blocks}, Float8E8M0FNUType::get(ctx));
}

namespace {
/// A scale operand, of a GEMM that becomes MXFP8, that a quantization's
/// scales feed: directly (`transpose` null), or for square tiles through
/// the linalg.transpose that `fp8-expand-linear` adds for an MN-major
/// operand read from the rowwise data (the tiles of x^T are those of x).
struct ScaleUse {
  ScaledMatmulOp gemm;
  bool isA;
  bool fromColumnwise;
  linalg::TransposeOp transpose;
};
} // namespace

/// The uses of `q`'s scales if each is a scale operand of a GEMM in
/// `convertible`, and `q` can write its scales in the MX form.
static std::optional<SmallVector<ScaleUse>>
collectScaleUses(QuantizeOp q, const DenseSet<Operation *> &convertible) {
  auto blockwise = dyn_cast<BlockwiseScalingAttr>(q.getRecipe());
  GranularityAttr g = q.getGranularity();
  if (!blockwise || blockwise.getScales() != BlockScaleKind::PowerOfTwo ||
      !g.isTile() || g.getTile().cols % kMXScaleBlock != 0 ||
      q.getScaleGranularityAttr() || q.getInput().getType().getRank() != 2)
    return std::nullopt;
  bool squareTiles = g.getTile().rows == g.getTile().cols;
  bool columnwiseUntransposed =
      !q.getColumnwise() ||
      q.getColumnwiseLayout() == ColumnwiseLayout::Untransposed;

  SmallVector<ScaleUse> uses;
  // Records `use` of a GEMM scale operand; false if it is something else.
  auto addGemmUse = [&](OpOperand &use, bool fromColumnwise,
                        linalg::TransposeOp transpose) {
    auto gemm = dyn_cast<ScaledMatmulOp>(use.getOwner());
    if (!gemm || !convertible.contains(gemm))
      return false;
    bool isA = &use == &gemm.getAScaleInvMutable();
    if (!isA && &use != &gemm.getBScaleInvMutable())
      return false;
    // Through a transpose, the GEMM operand is the rowwise data, read
    // MN-major: it switches to the (identical) untransposed columnwise
    // data, whose scales are the transposed ones.
    if (transpose && (isA ? gemm.getA() : gemm.getB()) != q.getRowwise())
      return false;
    uses.push_back({gemm, isA, fromColumnwise, transpose});
    return true;
  };
  for (Value scale : {q.getRowwiseScaleInv(), q.getColumnwiseScaleInv()}) {
    if (!scale)
      continue;
    bool fromColumnwise = scale == q.getColumnwiseScaleInv();
    for (OpOperand &use : scale.getUses()) {
      if (addGemmUse(use, fromColumnwise, nullptr))
        continue;
      auto transpose = dyn_cast<linalg::TransposeOp>(use.getOwner());
      if (!transpose || fromColumnwise || !squareTiles ||
          !columnwiseUntransposed || transpose->getNumResults() != 1)
        return std::nullopt;
      for (OpOperand &transposedUse : transpose->getResult(0).getUses())
        if (!addGemmUse(transposedUse, /*fromColumnwise=*/true, transpose))
          return std::nullopt;
    }
  }
  if (uses.empty())
    return std::nullopt;
  return uses;
}

/// Recreates `q` with its scales in the MX form (`scale_granularity = mx
/// 1x32`) when every use of its scales is a GEMM of `convertible`, adding an
/// untransposed columnwise output where a GEMM read transposed 128x128
/// scales of the rowwise data, and makes those GEMMs read the new scales.
static void foldConversionIntoQuantize(
    OpBuilder &b, QuantizeOp q, const DenseSet<Operation *> &convertible) {
  std::optional<SmallVector<ScaleUse>> uses =
      collectScaleUses(q, convertible);
  if (!uses)
    return;
  MLIRContext *ctx = b.getContext();
  auto inputType = q.getInput().getType();
  int64_t rows = inputType.getDimSize(0), cols = inputType.getDimSize(1);
  bool needsColumnwise = q.getColumnwise() ||
                         llvm::any_of(*uses, [](const ScaleUse &use) {
                           return use.fromColumnwise;
                         });
  Type rowwise, rowwiseScale, columnwise, columnwiseScale, amax;
  if (q.getRowwise()) {
    rowwise = q.getRowwise().getType();
    rowwiseScale = getMXScaleType(ctx, rows, cols);
  }
  ColumnwiseLayout layout = q.getColumnwiseLayout();
  if (needsColumnwise) {
    if (q.getColumnwise()) {
      columnwise = q.getColumnwise().getType();
    } else {
      columnwise = q.getRowwise().getType();
      layout = ColumnwiseLayout::Untransposed;
    }
    columnwiseScale = getMXScaleType(ctx, cols, rows);
  }
  if (q.getAmax())
    amax = q.getAmax().getType();
  b.setInsertionPoint(q);
  auto mx = QuantizeOp::create(
      b, q.getLoc(), rowwise, rowwiseScale, columnwise, columnwiseScale, amax,
      q.getInput(), q.getScale(), q.getRecipe(), q.getGranularity(), layout,
      GranularityAttr::getMX(ctx, kMXScaleBlock));
  mx->setDiscardableAttrs(q->getDiscardableAttrDictionary());

  for (ScaleUse use : *uses) {
    Value scale = use.fromColumnwise ? mx.getColumnwiseScaleInv()
                                     : mx.getRowwiseScaleInv();
    if (use.isA)
      use.gemm.getAScaleInvMutable().assign(scale);
    else
      use.gemm.getBScaleInvMutable().assign(scale);
    if (use.transpose) {
      if (use.isA)
        use.gemm.getAMutable().assign(mx.getColumnwise());
      else
        use.gemm.getBMutable().assign(mx.getColumnwise());
    }
  }
  for (const ScaleUse &use : *uses)
    if (use.transpose && use.transpose->use_empty())
      use.transpose->erase();
  // The data and the amax are unchanged; the old scales have no uses left.
  for (auto [from, to] : {std::pair(q.getRowwise(), mx.getRowwise()),
                          std::pair(q.getColumnwise(), mx.getColumnwise()),
                          std::pair(q.getAmax(), mx.getAmax())})
    if (from)
      from.replaceAllUsesWith(to);
  q.erase();
}

namespace {
struct BlockwiseToMX : public OpRewritePattern<ScaledMatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScaledMatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (const char *mismatch = getMismatch(op))
      return rewriter.notifyMatchFailure(op, mismatch);
    int64_t k = op.getK();
    Location loc = op.getLoc();
    Value sa = convertScales(rewriter, loc, op.getAScaleInv(),
                             op.getAGranularity(), op.getM(), k);
    Value sb = convertScales(rewriter, loc, op.getBScaleInv(),
                             op.getBGranularity(), op.getN(), k);
    auto mx = GranularityAttr::getMX(getContext(), kMXScaleBlock);
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
    // Quantizations of the same function first write their scales in the
    // MX form for the GEMMs that become MXFP8 (no conversion left)...
    SmallVector<ScaledMatmulOp> matmuls;
    getOperation()->walk([&](ScaledMatmulOp op) {
      if (!getMismatch(op))
        matmuls.push_back(op);
    });
    if (matmuls.empty())
      return;
    // Only a chip with a block-scaled MMA runs them better as MXFP8.
    FailureOr<TargetInfo> target = getTarget(matmuls.front());
    if (failed(target))
      return signalPassFailure();
    if (!target->chip.supportsBlockScaledMma)
      return;
    DenseSet<Operation *> convertible;
    for (ScaledMatmulOp op : matmuls)
      convertible.insert(op);
    SmallVector<QuantizeOp> quantizations;
    getOperation()->walk([&](QuantizeOp q) { quantizations.push_back(q); });
    OpBuilder builder(&getContext());
    for (QuantizeOp q : quantizations)
      foldConversionIntoQuantize(builder, q, convertible);
    // ... then every such GEMM becomes MXFP8, converting the other scales.
    RewritePatternSet patterns(&getContext());
    populateBlockwiseToMXPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::fp8::populateBlockwiseToMXPatterns(RewritePatternSet &patterns) {
  patterns.add<BlockwiseToMX>(patterns.getContext());
}

//===- FP8GroupedOps.cpp - fp8.grouped_scaled_matmul ----------------------===//
//
// The verifier of the grouped GEMM: the shapes of its operands in its
// layout, and the scale pairs its kernels take.
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Contract.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8ResultVerifier.h"
#include "ShapeCompatibility.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::fp8;

using contract::formatShape;

static ArrayRef<int64_t> getShape(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

/// The extent `dim` of `v`, or kDynamic when `v` has fewer dimensions (the
/// verifier reports the rank first).
static int64_t getExtent(Value v, unsigned dim) {
  ArrayRef<int64_t> shape = getShape(v);
  return dim < shape.size() ? shape[dim] : ShapedType::kDynamic;
}

/// A masked layout's A is [G, M, K] (rows of each group), the others' [M, K].
static bool isMasked(GroupedScaledMatmulOp op) {
  return op.getLayout() == GroupedLayout::MMasked;
}

/// A k_grouped layout's A [M, K] and B [N, K] hold the K columns of all
/// groups; its `groups` are the sizes [G] and its result [G, M, N].
static bool isKGrouped(GroupedScaledMatmulOp op) {
  return op.getLayout() == GroupedLayout::KGrouped;
}

int64_t GroupedScaledMatmulOp::getM() {
  return getExtent(getA(), isMasked(*this) ? 1 : 0);
}
int64_t GroupedScaledMatmulOp::getNumGroups() {
  if (!isKGrouped(*this))
    return getExtent(getB(), 0);
  int64_t g = getExtent(getGroups(), 0);
  return ShapedType::isDynamic(g) ? getExtent(getResult(), 0) : g;
}
int64_t GroupedScaledMatmulOp::getN() {
  return getExtent(getB(), isKGrouped(*this) ? 0 : 1);
}
int64_t GroupedScaledMatmulOp::getK() {
  return getExtent(getA(), isMasked(*this) ? 2 : 1);
}

/// Checks `value`'s shape against `expected`, naming what it holds.
static LogicalResult expectShape(GroupedScaledMatmulOp op, StringRef name,
                                 Value value, ArrayRef<int64_t> expected,
                                 StringRef what) {
  if (mlir::fp8::detail::isCompatibleShape(getShape(value), expected))
    return success();
  return op.emitOpError() << "expected " << name << " of shape "
                          << formatShape(expected) << " (" << what << "), got "
                          << formatShape(getShape(value));
}

/// Blockwise scales change every 128 K elements: the MMAs' partial sums
/// are promoted (scaled into f32) at least that often.
static LogicalResult verifyBlockwiseAccumulation(GroupedScaledMatmulOp op) {
  Accumulation accumulation = op.getAccumulation().getMode();
  if (accumulation.isFast() ||
      kBlockwiseScaleBlock % accumulation.promoteInterval != 0)
    return op.emitOpError()
           << "blockwise scales change every " << kBlockwiseScaleBlock
           << " K elements: expected accumulation promoted(N) with N dividing "
           << kBlockwiseScaleBlock;
  return success();
}

/// The scale pairs of the grouped kernels: per-tensor or per-row on each
/// side, DeepSeek-V3's blockwise 1x128 activation and 128x128 weight
/// tiles, or MXFP8 1x32 blocks on both.
static LogicalResult verifyGranularities(GroupedScaledMatmulOp op) {
  GranularityAttr ga = op.getAGranularity(), gb = op.getBGranularity();
  if (ga.isEpilogueScaled() && gb.isEpilogueScaled())
    return success();
  if (ga.isMX() && gb.isMX())
    return success();
  TileShape act{1, kBlockwiseScaleBlock};
  TileShape weight{kBlockwiseScaleBlock, kBlockwiseScaleBlock};
  if (ga.isTile() && gb.isTile() && ga.getTile() == act &&
      gb.getTile() == weight)
    return verifyBlockwiseAccumulation(op);
  return op.emitOpError()
         << "expected per-tensor or per-row scales on both sides, "
            "blockwise tile 1x128 (A) and tile 128x128 (B), or mx 1x32 on "
            "both; got "
         << ga.describe() << " and " << gb.describe();
}

/// The element type of each scale tensor against its granularity: f32 for
/// per-tensor and per-row scales, f8E8M0FNU (UE8M0) for MX blocks, either
/// for blockwise tiles (f8E8M0FNU: powers of two).
static LogicalResult verifyScaleTypes(GroupedScaledMatmulOp op) {
  for (auto [name, scale, g] :
       {std::tuple<StringRef, Value, GranularityAttr>{
            "a_scale_inv", op.getAScaleInv(), op.getAGranularity()},
        {"b_scale_inv", op.getBScaleInv(), op.getBGranularity()}}) {
    Type elem = cast<ShapedType>(scale.getType()).getElementType();
    if (g.isMX() && !isa<Float8E8M0FNUType>(elem))
      return op.emitOpError() << "expected " << name
                              << " of element type f8E8M0FNU (UE8M0 MX "
                                 "scales), got "
                              << elem;
    if (g.isEpilogueScaled() && !elem.isF32())
      return op.emitOpError()
             << "expected " << name << " of element type f32 for granularity "
             << g.describe() << ", got " << elem;
  }
  return success();
}

/// The operand shapes of the layout: A, the result and `groups`, with what
/// each holds.
namespace {
struct LayoutShapes {
  unsigned aRank;
  const char *aShape, *aText, *resultText, *groupsText;
  SmallVector<int64_t> result, groups;
};
} // namespace

static LayoutShapes getLayoutShapes(GroupedScaledMatmulOp op) {
  int64_t m = op.getM(), g = op.getNumGroups(), n = op.getN();
  if (isMasked(op))
    return {3,
            "[G, M, K]",
            "[G, M, K], the rows of each group",
            "[G, M, N]",
            "[G], the valid rows of each group",
            {g, m, n},
            {g}};
  return {2,        "[M, K]", "[M, K], the rows of all groups", "[M, N]",
          "[M], the group of each row of A", {m, n}, {m}};
}

/// The scale pairs of the k_grouped kernels: per-tensor or per-row on each
/// side, or 1x128 tiles on both (the wgrad GEMM's blockwise recipe).
static LogicalResult verifyKGroupedGranularities(GroupedScaledMatmulOp op) {
  GranularityAttr ga = op.getAGranularity(), gb = op.getBGranularity();
  if (ga.isEpilogueScaled() && gb.isEpilogueScaled())
    return success();
  TileShape act{1, kBlockwiseScaleBlock};
  if (!ga.isTile() || !gb.isTile() || ga.getTile() != act ||
      gb.getTile() != act)
    return op.emitOpError()
           << "expected per-tensor or per-row scales on both sides, or "
              "blockwise tile 1x128 on both (k_grouped: A and B are both "
              "1x128-quantized along the tokens); got "
           << ga.describe() << " and " << gb.describe();
  return verifyBlockwiseAccumulation(op);
}

/// The scale shape of `granularity` over `[rows, k]` in the k_grouped
/// layout: per-tensor and per-row scales one set per group, 1x128 tiles
/// over the columns of all groups.
static SmallVector<int64_t> getKGroupedScaleShape(GranularityAttr granularity,
                                                  int64_t g, int64_t rows,
                                                  int64_t k) {
  SmallVector<int64_t> shape = granularity.getScaleShape(rows, k);
  if (granularity.isEpilogueScaled())
    shape.insert(shape.begin(), g);
  return shape;
}

/// The k_grouped layout: A [M, K] and B [N, K] over the K columns of all
/// groups, `groups` the sizes [G], the result [G, M, N].
static LogicalResult verifyKGrouped(GroupedScaledMatmulOp op) {
  ArrayRef<int64_t> a = getShape(op.getA()), b = getShape(op.getB());
  if (a.size() != 2)
    return op.emitOpError() << "expected A of rank 2 ([M, K], the K columns "
                               "of all groups), got "
                            << formatShape(a);
  if (b.size() != 2)
    return op.emitOpError() << "expected B of rank 2 ([N, K], the K columns "
                               "of all groups), got "
                            << formatShape(b);
  int64_t m = op.getM(), g = op.getNumGroups(), n = op.getN(), k = op.getK();
  if (!ShapedType::isDynamic(k) && !ShapedType::isDynamic(b[1]) && k != b[1])
    return op.emitOpError() << "expected A [M, K] and B [N, K] to have the "
                               "same K, got "
                            << formatShape(a) << " and " << formatShape(b);
  if (!ShapedType::isDynamic(k) && k % kBlockwiseScaleBlock != 0)
    return op.emitOpError()
           << "expected K, the columns of all groups, to be a multiple of "
           << kBlockwiseScaleBlock << " (every group's size is), got K = " << k;
  if (op.hasFP8Result() || op.getResultRecipeAttr() ||
      op.getResultGranularityAttr() || op.getResultScale() ||
      op.getResultScaleInv())
    return op.emitOpError()
           << "k_grouped takes a bf16, f16 or f32 result without "
              "result_recipe, result_granularity, result_scale or a "
              "scale_inv result (no FP8 result for the wgrad layout), got "
              "a result of element type "
           << op.getResult().getType().getElementType();
  for (auto [name, scale] : {std::pair<StringRef, Value>{"a_scale_inv",
                                                         op.getAScaleInv()},
                             {"b_scale_inv", op.getBScaleInv()}}) {
    Type elem = cast<ShapedType>(scale.getType()).getElementType();
    if (!elem.isF32())
      return op.emitOpError()
             << "expected " << name
             << " of element type f32 (the k_grouped kernels read f32 "
                "scales), got "
             << elem;
  }
  if (failed(verifyKGroupedGranularities(op)))
    return failure();
  if (failed(expectShape(op, "groups", op.getGroups(), {g},
                         "[G], the K columns of each group")) ||
      failed(expectShape(op, "the result", op.getResult(), {g, m, n},
                         "[G, M, N], one [M, N] per group")))
    return failure();
  std::string perGroup = ", one set per group";
  auto what = [&](GranularityAttr granularity, StringRef name,
                  ArrayRef<int64_t> shape) {
    return "granularity " + granularity.describe() + " of " + name.str() +
           " " + formatShape(shape) +
           (granularity.isEpilogueScaled() ? perGroup : std::string());
  };
  GranularityAttr ga = op.getAGranularity(), gb = op.getBGranularity();
  if (failed(expectShape(op, "a_scale_inv", op.getAScaleInv(),
                         getKGroupedScaleShape(ga, g, m, k),
                         what(ga, "A", {m, k}))) ||
      failed(expectShape(op, "b_scale_inv", op.getBScaleInv(),
                         getKGroupedScaleShape(gb, g, n, k),
                         what(gb, "B", {n, k}))))
    return failure();
  return success();
}

LogicalResult GroupedScaledMatmulOp::verify() {
  if (isKGrouped(*this))
    return verifyKGrouped(*this);
  LayoutShapes layout = getLayoutShapes(*this);
  if (getShape(getA()).size() != layout.aRank)
    return emitOpError() << "expected A of rank " << layout.aRank << " ("
                         << layout.aText << "), got "
                         << formatShape(getShape(getA()));
  if (getShape(getB()).size() != 3)
    return emitOpError() << "expected B of rank 3 ([G, N, K], one weight "
                            "per group), got "
                         << formatShape(getShape(getB()));
  int64_t m = getM(), g = getNumGroups(), n = getN(), k = getK();
  int64_t kb = getShape(getB())[2];
  if (!ShapedType::isDynamic(k) && !ShapedType::isDynamic(kb) && k != kb)
    return emitOpError() << "expected A " << layout.aShape
                         << " and B [G, N, K] to have the same K, got "
                         << formatShape(getShape(getA())) << " and "
                         << formatShape(getShape(getB()));
  int64_t ga = isMasked(*this) ? getShape(getA())[0] : g;
  if (!ShapedType::isDynamic(ga) && !ShapedType::isDynamic(g) && ga != g)
    return emitOpError() << "expected A [G, M, K] and B [G, N, K] to have the "
                            "same G, got "
                         << formatShape(getShape(getA())) << " and "
                         << formatShape(getShape(getB()));
  if (failed(verifyGranularities(*this)) || failed(verifyScaleTypes(*this)))
    return failure();
  if (failed(expectShape(*this, "the result", getResult(), layout.result,
                         layout.resultText)) ||
      failed(expectShape(*this, "groups", getGroups(), layout.groups,
                         layout.groupsText)))
    return failure();
  SmallVector<int64_t> aScale = getAGranularity().getScaleShape(m, k);
  // A masked layout's per-row and 1x128 A scales: one set per group.
  if (isMasked(*this) && !aScale.empty())
    aScale.insert(aScale.begin(), g);
  SmallVector<int64_t> bScale = {g};
  llvm::append_range(bScale, getBGranularity().getScaleShape(n, k));
  std::string aWhat = "granularity " + getAGranularity().describe() + " of A " +
                      formatShape(isMasked(*this) ? SmallVector<int64_t>{g, m, k}
                                                  : SmallVector<int64_t>{m, k});
  std::string bWhat = "granularity " + getBGranularity().describe() +
                      " of each of the G weights " + formatShape({n, k});
  if (failed(
          expectShape(*this, "a_scale_inv", getAScaleInv(), aScale, aWhat)) ||
      failed(expectShape(*this, "b_scale_inv", getBScaleInv(), bScale, bWhat)))
    return failure();
  // An FP8 D: the dense op's rules; a masked D's 1x128 scales per group.
  SmallVector<int64_t, 1> outerDims;
  if (isMasked(*this))
    outerDims.push_back(g);
  return detail::verifyFP8Result(
      *this, {getResultRecipeAttr(), getResultGranularityAttr(),
              getResultScale(), getResultScaleInv(),
              getResult().getType().getElementType(), m, n, outerDims});
}

//===- KernelContract.cpp - What the kernels of a chip take ---------------===//

#include "FP8/Conversion/FP8ToGPU/KernelContract.h"
#include "FP8/Conversion/FP8ToHopper/HopperGemm.h"
#include "FP8/Conversion/KernelSkeleton/GemmOutputQuantization.h"
#include "FP8/Conversion/QuantizeKernels/DequantizeKernel.h"
#include "FP8/Conversion/QuantizeKernels/QuantizeKernel.h"
#include "FP8/Dialect/FP8/IR/FP8Contract.h"
#include "GemmPlan.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::fp8;

//===----------------------------------------------------------------------===//
// GEMMs
//===----------------------------------------------------------------------===//

/// Elements of the scale tensor of an `mn` x `k` operand at granularity `g`
/// in the layout the kernels read it in (the metadata's), or nullopt when
/// that overflows.
static std::optional<int64_t> getScaleLayoutElements(GranularityAttr g,
                                                     bool blockScaled,
                                                     int64_t mn, int64_t k) {
  if (g.isTensor())
    return 1;
  if (g.isRow())
    return mn;
  int64_t kBlocks = llvm::divideCeil(k, kBlockwiseScaleBlock);
  // The 128x4 UE8M0 atoms of the block-scaled MMA: 512 bytes per 128 rows
  // and 128 K elements.
  if (blockScaled) {
    int64_t mnAtoms = llvm::divideCeil(mn, kMXAtomRows);
    return llvm::checkedMul(mnAtoms * kBlocks, kMXAtomBytes);
  }
  // 1x128: MN-major [ceil(K/128), roundup(MN, 4)]; 128x128: one per tile.
  if (g.getTile().rows == 1) {
    std::optional<int64_t> rows =
        contract::roundUp(mn, kMNMajorScaleAlignment);
    return rows ? llvm::checkedMul(*rows, kBlocks) : std::nullopt;
  }
  int64_t mnBlocks = llvm::divideCeil(mn, kBlockwiseScaleBlock);
  return llvm::checkedMul(mnBlocks, kBlocks);
}

/// The limits of the kernel's 32-bit index arithmetic that a static shape
/// decides at compile time (a run-time M is checked at launch): scale
/// offsets, tile numbers, the raster groups' tile counts.
static LogicalResult checkIndexRanges(ScaledMatmulOp op,
                                      const GemmKernelPlan &plan) {
  const GemmProblem &p = plan.gemm.problem;
  const GemmTiling &t = plan.tiling;
  int64_t nTiles = llvm::divideCeil(p.n, t.tileN);
  std::optional<int64_t> groupTiles = llvm::checkedMul(t.rasterGroup, nTiles);
  if (!groupTiles || *groupTiles > contract::kMaxExtent)
    return op.emitOpError()
           << "raster_group " << t.rasterGroup << " times the " << nTiles
           << " tile columns of N = " << p.n << " exceeds "
           << contract::kMaxExtentText
           << " (the tile scheduler counts in 32 bits): use a smaller "
              "raster_group";
  std::pair<StringRef, std::optional<int64_t>> scales[] = {
      {"b_scale_inv", getScaleLayoutElements(op.getBGranularity(),
                                             p.isBlockScaled(), p.n, p.k)}};
  if (!ShapedType::isDynamic(p.staticM)) {
    int64_t mTiles = llvm::divideCeil(p.staticM, t.tileM);
    std::optional<int64_t> tiles = llvm::checkedMul(mTiles, nTiles);
    if (!tiles || *tiles > contract::kMaxExtent)
      return op.emitOpError()
             << "M = " << p.staticM << " and N = " << p.n << " make more than "
             << contract::kMaxExtentText << " output tiles of " << t.tileM
             << "x" << t.tileN
             << " (the tile scheduler numbers them in 32 bits): split the "
                "GEMM along M";
    std::optional<int64_t> a = getScaleLayoutElements(
        op.getAGranularity(), p.isBlockScaled(), p.staticM, p.k);
    if (!a || *a > contract::kMaxIndexedElements)
      return op.emitOpError()
             << "a_scale_inv holds more than " << contract::kMaxExtentText
             << " elements in the layout the kernels read (M = " << p.staticM
             << ", K = " << p.k
             << "; 32-bit scale offsets): split the GEMM along M, or along "
                "K and add the parts";
  }
  for (auto [name, elements] : scales)
    if (!elements || *elements > contract::kMaxIndexedElements)
      return op.emitOpError()
             << name << " holds more than " << contract::kMaxExtentText
             << " elements in the layout the kernels read (N = " << p.n
             << ", K = " << p.k
             << "; 32-bit scale offsets): split the GEMM along N, or along "
                "K and add the parts";
  return success();
}

/// The sm_100a kernel of a dense or grouped GEMM `op`.
template <typename OpTy>
static FailureOr<GemmKernelPlan> planBlackwellKernel(OpTy op,
                                                     const TargetInfo &target) {
  FailureOr<blackwell::BlackwellGemm> gemm = blackwell::getBlackwellGemm(op);
  if (failed(gemm))
    return failure();
  FailureOr<GemmTiling> tiling =
      blackwell::selectGemmTiling(op, *gemm, op.getConfigAttr(), target);
  if (failed(tiling))
    return failure();
  return GemmKernelPlan{*gemm, *tiling};
}

/// The sm_90a kernel of `problem`, the GEMM of `op`.
static FailureOr<GemmKernelPlan>
planHopperKernel(Operation *op, FailureOr<GemmProblem> problem,
                 GemmConfigAttr config, const TargetInfo &target) {
  if (failed(problem))
    return failure();
  FailureOr<GemmTiling> tiling =
      hopper::selectGemmTiling(op, *problem, config, target);
  if (failed(tiling))
    return failure();
  GemmKernelPlan plan;
  plan.gemm.problem = *problem;
  plan.tiling = *tiling;
  return plan;
}

FailureOr<GemmKernelPlan> mlir::fp8::planGemmKernel(ScaledMatmulOp op,
                                                    const TargetInfo &target) {
  const ChipInfo &chip = target.chip;
  FailureOr<GemmKernelPlan> plan = failure();
  if (chip.architecture == Architecture::Blackwell) {
    plan = planBlackwellKernel(op, target);
  } else {
    if (op.getAMajor() != OperandMajor::K || op.getBMajor() != OperandMajor::K)
      return op.emitOpError() << chip.name
                              << " reads FP8 MMA operands K-major only (TN): "
                                 "run fp8-verify-target for the fix";
    plan = planHopperKernel(op, GemmProblem::get(op), op.getConfigAttr(),
                            target);
  }
  if (failed(plan) || failed(checkIndexRanges(op, *plan)))
    return failure();
  return plan;
}

bool mlir::fp8::groupedKernelsWriteFP8Result(GroupedLayout layout,
                                             const ChipInfo *chip) {
  if (layout == GroupedLayout::KGrouped)
    return false;
  return !chip || chip->architecture == Architecture::Hopper;
}

bool mlir::fp8::groupedKernelsQuantizeResult(GroupedLayout layout,
                                             const ChipInfo *chip,
                                             RecipeAttrInterface recipe,
                                             GranularityAttr g,
                                             bool givenScale) {
  return groupedKernelsWriteFP8Result(layout, chip) &&
         !needsTwoPhases(recipe, g, givenScale);
}

FailureOr<GemmKernelPlan>
mlir::fp8::planGroupedGemmKernel(GroupedScaledMatmulOp op,
                                 const TargetInfo &target) {
  FailureOr<GemmKernelPlan> planOrFailure = failure();
  if (target.chip.architecture == Architecture::Blackwell) {
    if (op.getLayout() != GroupedLayout::MContiguous)
      return op.emitOpError()
             << "the " << target.chip.name
             << " grouped kernels take the m_contiguous layout only, not "
             << stringifyGroupedLayout(op.getLayout())
             << " (its kernels are sm_90a ones)";
    // The sm_100a epilogue has no FP8 quantization, and two phases would
    // leave the padding rows of an f32 D for the quantization to read.
    if (op.hasFP8Result() &&
        !groupedKernelsWriteFP8Result(op.getLayout(), &target.chip))
      return op.emitOpError()
             << "the " << target.chip.name
             << " grouped kernels write a bf16, f16 or f32 result, got "
             << op.getResult().getType()
             << ": produce an f32 result and quantize the rows of each "
                "group, or run the FP8 result on sm_90a";
    planOrFailure = planBlackwellKernel(op, target);
  } else {
    if (op.getAGranularity().isTile())
      for (Value scale : {op.getAScaleInv(), op.getBScaleInv()})
        if (!cast<ShapedType>(scale.getType()).getElementType().isF32())
          return op.emitOpError()
                 << "the " << target.chip.name
                 << " grouped kernels read blockwise scales as f32, got "
                 << scale.getType();
    planOrFailure = planHopperKernel(op, GemmProblem::get(op),
                                     op.getConfigAttr(), target);
  }
  if (failed(planOrFailure))
    return failure();
  GemmKernelPlan plan = *planOrFailure;
  const GemmProblem &problem = plan.gemm.problem;
  const GemmTiling &tiling = plan.tiling;
  // Every tile's rows lie in one group (tile M divides the groups'
  // alignment); the CTAs of a 2x1 cluster would share a B tile across two
  // groups. A 1x2 cluster's CTAs share the A rows, so their group:
  // m_contiguous and m_masked GEMMs take it (the tiling rejects it for
  // k_grouped).
  if (kGroupRowAlignment % tiling.tileM != 0 || tiling.clusterM != 1 ||
      tiling.streamK)
    return op.emitOpError()
           << "the grouped GEMM kernels take tile M dividing "
           << kGroupRowAlignment
           << " (the groups' row alignment), no 2x1 cluster and no "
              "stream-K; got tile M "
           << tiling.tileM << ", cluster " << tiling.clusterM << "x"
           << tiling.clusterN << (tiling.streamK ? ", stream-K" : "");
  // k_grouped: a tile's K blocks are its group's (sizes multiples of 128);
  // the tiling rejects any other tile K before this point.
  assert((!problem.isKGrouped() || kBlockwiseScaleBlock % tiling.tileK == 0) &&
         "k_grouped tiling with a tile K not dividing the group alignment");
  std::optional<int64_t> scales =
      llvm::checkedMul(problem.getBScaleElementsPerGroup(), problem.numGroups);
  std::optional<int64_t> bRows = llvm::checkedMul(problem.numGroups, problem.n);
  if (!scales || *scales > contract::kMaxIndexedElements || !bRows ||
      *bRows > contract::kMaxExtent)
    return op.emitOpError()
           << "G = " << problem.numGroups << " groups of N = " << problem.n
           << " exceed the 32-bit indices of the grouped kernels (B rows and "
              "B scales): split the groups";
  return plan;
}

//===----------------------------------------------------------------------===//
// Linear layers
//===----------------------------------------------------------------------===//

namespace {
/// The shapes and recipe of a linear layer op.
struct LinearLayer {
  int64_t m, n, k;
  RecipeAttrInterface recipe;
  bool backward;
};
} // namespace

static LinearLayer getLinearLayer(Operation *op) {
  auto shape = [](Value v) { return cast<ShapedType>(v.getType()).getShape(); };
  Value input, weight;
  LinearLayer layer;
  if (auto linear = dyn_cast<LinearOp>(op)) {
    input = linear.getInput();
    weight = linear.getWeight();
    layer.recipe = linear.getRecipe();
    layer.backward = false;
  } else {
    auto backward = cast<LinearBackwardOp>(op);
    input = backward.getInput();
    weight = backward.getWeight();
    layer.recipe = backward.getRecipe();
    layer.backward = true;
  }
  layer.m = shape(input)[0];
  layer.n = shape(weight)[0];
  layer.k = ShapedType::isDynamic(shape(input)[1]) ? shape(weight)[1]
                                                   : shape(input)[1];
  return layer;
}

/// The recipe's tiles and promotion interval against the GEMM kernels'.
static LogicalResult checkLinearRecipe(Operation *op, const LinearLayer &layer,
                                       const ChipInfo &chip) {
  if (auto blockwise = dyn_cast<BlockwiseScalingAttr>(layer.recipe)) {
    TileShape act = blockwise.getAct(), weight = blockwise.getWeight();
    if (act != TileShape{1, kBlockwiseScaleBlock} ||
        (weight != TileShape{kBlockwiseScaleBlock, kBlockwiseScaleBlock} &&
         weight != TileShape{1, kBlockwiseScaleBlock}))
      return op->emitOpError()
             << "the GEMM kernels take #fp8.blockwise<act = 1x128, weight = "
                "128x128> (or weight = 1x128), got act = "
             << act.rows << "x" << act.cols << ", weight = " << weight.rows
             << "x" << weight.cols;
    if (chip.supportsBlockScaledMma &&
        blockwise.getScales() != BlockScaleKind::PowerOfTwo)
      return op->emitOpError()
             << chip.name
             << " runs blockwise GEMMs on the block-scaled MMA, which takes "
                "power-of-two scales: use #fp8.blockwise<scales = pow2> (the "
                "default) there, or run scales = f32 on sm_90a";
  }
  Accumulation accumulate = layer.recipe.getAccumulate();
  if (!accumulate.isFast() &&
      accumulate.promoteInterval != kBlockwiseScaleBlock)
    return op->emitOpError()
           << "the GEMM kernels promote every " << kBlockwiseScaleBlock
           << " K elements: expected the recipe's accumulate to be fast or "
              "promoted("
           << kBlockwiseScaleBlock << "), got promoted("
           << accumulate.promoteInterval << ")";
  return success();
}

LogicalResult mlir::fp8::verifyLinearKernelContract(Operation *op,
                                                    const ChipInfo &chip) {
  LinearLayer layer = getLinearLayer(op);
  if (isa<MXScalingAttr>(layer.recipe) && !chip.supportsBlockScaledMma)
    return op->emitOpError()
           << "MXFP8 needs the block-scaled MMA of sm_100a; " << chip.name
           << " has none (use #fp8.blockwise or a per-tensor recipe there)";
  if (ShapedType::isDynamic(layer.n) || ShapedType::isDynamic(layer.k))
    return op->emitOpError()
           << "expected a static N (output features) and K (input features), "
              "got N = "
           << (ShapedType::isDynamic(layer.n) ? "?" : std::to_string(layer.n))
           << ", K = "
           << (ShapedType::isDynamic(layer.k) ? "?" : std::to_string(layer.k))
           << ": the GEMM kernels are built per N and K; only M (tokens) may "
              "be dynamic";
  for (auto [name, value] : {std::pair<StringRef, int64_t>{
                                 "K (input features)", layer.k},
                             {"N (output features)", layer.n}})
    if (value % contract::kTmaStrideAlignment != 0)
      return op->emitOpError()
             << "expected " << name << " to be a multiple of 16, got "
             << value
             << ": the kernels read and write rows of it in 16-byte aligned "
                "strides (TMA)";
  if (layer.backward) {
    if (ShapedType::isDynamic(layer.m))
      return op->emitOpError()
             << "expected a static token count M: the weight gradient "
                "dW = dY^T X reduces over M, and its kernel is built per "
                "reduction length (only the forward fp8.linear takes a "
                "run-time M)";
    if (layer.m % contract::kTmaStrideAlignment != 0)
      return op->emitOpError()
             << "expected the token count M to be a multiple of 16, got "
             << layer.m
             << ": the weight gradient dW = dY^T X reduces over M, read in "
                "rows of M bytes at 16-byte aligned strides (TMA); pad the "
                "batch to a multiple of 16 tokens";
  }
  return checkLinearRecipe(op, layer, chip);
}

//===----------------------------------------------------------------------===//
// Every op
//===----------------------------------------------------------------------===//

LogicalResult mlir::fp8::verifyKernelContract(Operation *op,
                                              const TargetInfo &target) {
  const ChipInfo &chip = target.chip;
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ScaledMatmulOp op) { return planGemmKernel(op, target); })
      .Case([&](GroupedScaledMatmulOp op) {
        return planGroupedGemmKernel(op, target);
      })
      .Case([&](QuantizeOp op) { return verifyQuantizeKernelContract(op); })
      .Case([&](DequantizeOp op) { return DequantizeProblem::get(op); })
      .Case([&](AmaxOp op) { return QuantizeProblem::get(op); })
      .Case<LinearOp, LinearBackwardOp>(
          [&](Operation *op) { return verifyLinearKernelContract(op, chip); })
      .Default([](Operation *) { return success(); });
}

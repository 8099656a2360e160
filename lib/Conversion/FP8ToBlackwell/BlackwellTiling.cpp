//===- BlackwellTiling.cpp - Tiling of the sm_100a GEMM -------------------===//
//
// What the sm_100a kernel takes of an fp8.scaled_matmul (MX and
// power-of-two blockwise scales on the block-scaled MMA), the heuristic and
// the checks of a tiling against tcgen05, TMA and Tensor Memory, the
// kernel's name, shared memory and metadata.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToBlackwell/BlackwellTiling.h"
#include "FP8/Conversion/FP8ToBlackwell/BlackwellKernel.h"
#include "FP8/Conversion/KernelSkeleton/GemmScheduler.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::blackwell;

//===----------------------------------------------------------------------===//
// Problem and tiling
//===----------------------------------------------------------------------===//

static blackwell::OperandMajor toEncodingMajor(fp8::OperandMajor major) {
  return major == fp8::OperandMajor::K ? blackwell::OperandMajor::K
                                       : blackwell::OperandMajor::MN;
}

/// Blockwise scales run on the block-scaled MMA as MX without touching the
/// FP8 data, which needs power-of-two scales: UE8M0 (f8E8M0FNU) scale
/// operands, or f32 ones under a `#fp8.blockwise<scales = pow2>` recipe
/// (the host converts them: emulation::blockwiseScalesToMx). Non-power-of-two
/// f32 scales would need a per-128-K rescale on CUDA cores (not implemented)
/// or requantized data.
static LogicalResult checkBlockwiseAsMX(ScaledMatmulOp op) {
  auto recipe = dyn_cast_or_null<BlockwiseScalingAttr>(op.getRecipeAttr());
  if (recipe && recipe.getScales() != BlockScaleKind::PowerOfTwo)
    return op.emitOpError()
           << "blockwise f32 scales cannot use the block-scaled MMA without "
              "requantizing; the sm_100a lowering does not rescale per 128-K "
              "block on CUDA cores: quantize with #fp8.blockwise<scales = "
              "pow2> (or #fp8.mxfp8), or run on sm_90a";
  for (auto [name, scale] :
       {std::pair<StringRef, Value>{"A", op.getAScaleInv()},
        {"B", op.getBScaleInv()}}) {
    Type elem = cast<ShapedType>(scale.getType()).getElementType();
    if (isa<Float8E8M0FNUType>(elem) || recipe)
      continue;
    return op.emitOpError()
           << "the sm_100a block-scaled MMA takes blockwise " << name
           << " scales as f8E8M0FNU, or as f32 under a #fp8.blockwise<scales "
              "= pow2> recipe (the host converts powers of two to UE8M0); got "
           << elem
           << " with no such recipe, which may hold non-power-of-two "
              "scales";
  }
  return success();
}

FailureOr<BlackwellGemm> blackwell::getBlackwellGemm(ScaledMatmulOp op) {
  if (op.getAGranularity().isMX() != op.getBGranularity().isMX())
    return op.emitOpError() << "the sm_100a block-scaled GEMM takes MX scales "
                               "on both operands";
  bool blockwise =
      op.getAGranularity().isTile() || op.getBGranularity().isTile();
  if (blockwise && failed(checkBlockwiseAsMX(op)))
    return failure();
  FailureOr<GemmProblem> problem = GemmProblem::get(op, /*allowMXScales=*/true,
                                                    /*epilogueQuantizes=*/false);
  if (failed(problem))
    return failure();
  problem->blockwiseAsMX = problem->isBlockwise();
  // promoted(N) needs no CUDA-core promotion on sm_100a: tcgen05 keeps the
  // whole K reduction in the f32 accumulator in Tensor Memory (the Hopper
  // promotion exists because wgmma's partial sums keep about 14 bits), and
  // the block-scaled MMA applies its scales inside the tensor core. Both
  // accumulation modes therefore lower to the same kernel. Assumption from
  // the PTX ISA's f32 accumulator type; not measured on a Blackwell GPU.
  BlackwellGemm gemm;
  gemm.problem = *problem;
  gemm.aMajor = toEncodingMajor(op.getAMajor());
  gemm.bMajor = toEncodingMajor(op.getBMajor());
  return gemm;
}

FailureOr<BlackwellGemm>
blackwell::getBlackwellGemm(GroupedScaledMatmulOp op) {
  // The verifier admits MX scales on both operands or neither. Blockwise
  // scales must be UE8M0 already: the pipeline's conversion of f32 ones
  // (fp8-blockwise-to-mx) takes dense GEMMs only.
  if (op.getAGranularity().isTile())
    for (auto [name, scale] :
         {std::pair<StringRef, Value>{"A", op.getAScaleInv()},
          {"B", op.getBScaleInv()}})
      if (!isa<Float8E8M0FNUType>(
              cast<ShapedType>(scale.getType()).getElementType()))
        return op.emitOpError()
               << "the sm_100a grouped kernels run blockwise GEMMs on the "
                  "block-scaled MMA and take their "
               << name
               << " scales as f8E8M0FNU (powers of two, in the MX atom "
                  "layout of the kernel metadata), got "
               << scale.getType() << ": run f32 blockwise scales on sm_90a";
  FailureOr<GemmProblem> problem =
      GemmProblem::get(op, /*allowMXScales=*/true);
  if (failed(problem))
    return failure();
  problem->blockwiseAsMX = problem->isBlockwise();
  // K-major operands only (the op's TN form).
  BlackwellGemm gemm;
  gemm.problem = *problem;
  return gemm;
}

static Fp8Format getFp8Format(Type elementType) {
  return isa<Float8E5M2Type>(elementType) ? Fp8Format::E5M2 : Fp8Format::E4M3;
}

/// The fields both instruction descriptors (f8f6f4 and block-scaled) share.
template <typename Descriptor>
static Descriptor getCommonInstrDescriptor(const BlackwellGemm &g,
                                           const GemmTiling &t) {
  Descriptor d;
  d.ctaGroup = getCtaGroup(t);
  d.m = t.tileM;
  d.n = t.tileN;
  d.aFormat = getFp8Format(g.problem.aElementType);
  d.bFormat = getFp8Format(g.problem.bElementType);
  d.aMajor = g.aMajor;
  d.bMajor = g.bMajor;
  return d;
}

BlockScaledInstrDescriptor
blackwell::getBlockScaledInstrDescriptor(const BlackwellGemm &g,
                                         const GemmTiling &t) {
  return getCommonInstrDescriptor<BlockScaledInstrDescriptor>(g, t);
}

F8F6F4InstrDescriptor blackwell::getInstrDescriptor(const BlackwellGemm &g,
                                                    const GemmTiling &t) {
  auto d = getCommonInstrDescriptor<F8F6F4InstrDescriptor>(g, t);
  d.dFormat = AccumulatorFormat::F32;
  return d;
}
std::optional<BlockScaledTmemPlan> blackwell::getBlockScaledTmemPlan(
    const GemmTiling &t, int64_t accumulatorStages, std::string *error) {
  return planBlockScaledTmem(t.tileN, accumulatorStages, error,
                             /*scaleSlots=*/t.stages);
}

int64_t blackwell::getAccumulatorStages(const BlackwellGemm &g,
                                        const GemmTiling &t) {
  if (g.problem.isBlockScaled() &&
      !getBlockScaledTmemPlan(t, kAccumulatorStages))
    return 1;
  return kAccumulatorStages;
}

int64_t blackwell::getTmemColumns(const BlackwellGemm &g, const GemmTiling &t) {
  if (g.problem.isBlockScaled()) {
    std::optional<BlockScaledTmemPlan> plan =
        getBlockScaledTmemPlan(t, getAccumulatorStages(g, t));
    return plan ? plan->allocatedColumns : 0;
  }
  return tmemAllocationColumns(kAccumulatorStages * t.tileN).value_or(0);
}

int64_t blackwell::getDynamicSharedMemoryBytes(const BlackwellGemm &g,
                                               const GemmTiling &t) {
  return t.stages * (getCtaStageBytes(t) + getScaleStageBytes(g, t)) +
         getCtaEpilogueBytes(t) + getBarrierBytes(t.stages);
}

static const char *majorName(blackwell::OperandMajor major) {
  return major == blackwell::OperandMajor::K ? "K-major" : "MN-major";
}

FailureOr<GemmTiling> blackwell::selectGemmTiling(Operation *op,
                                                  const BlackwellGemm &g,
                                                  GemmConfigAttr config,
                                                  const TargetInfo &target) {
  const GemmProblem &p = g.problem;
  int64_t outputBytes = p.outElementType.getIntOrFloatBitWidth() / 8;
  // f32 outputs and accumulate-into-C keep direct stores (as on sm_90a).
  bool canStageOutput = outputBytes == 2 && !p.accumulateIntoC;
  GemmTiling t;
  if (config) {
    if (config.getStreamK() && config.getStreamK().getValue())
      return op->emitOpError()
             << "the sm_100a kernels have no stream-K schedule: drop "
                "`stream_k = true` from the gemm_config";
    if (config.getPromotionParts() != 0)
      return op->emitOpError()
             << "the sm_100a kernels accumulate in f32 tensor memory, with "
                "no promotion: remove `promotion_parts` from the gemm_config";
    if (config.getPingPong() && config.getPingPong().getValue())
      return op->emitOpError()
             << "the sm_100a kernels have no ping-pong schedule (one thread "
                "issues a tile's MMAs into tensor memory): drop `ping_pong = "
                "true` from the gemm_config";
    t = getGemmTiling(config, outputBytes, canStageOutput);
  } else {
    t.outputBytes = outputBytes;
    t.tileM = kTileM;
    t.tileK = kTileK;
    t.tmaStoreEpilogue = canStageOutput;
    int64_t multipleOf = 16;
    if (canStageOutput)
      multipleOf = std::max(multipleOf, t.storeBoxColumns());
    if (g.bMajor == blackwell::OperandMajor::MN)
      multipleOf = std::max(multipleOf, kSwizzle128BRowBytes);
    if (p.isBlockScaled())
      multipleOf = std::max(multipleOf, kMXAtomRows);
    t.tileN = pickLeastPaddedTileN(p.n, multipleOf);
    int64_t available = target.maxSharedMemoryPerBlock -
                        getCtaEpilogueBytes(t) -
                        getBarrierBytes(kMaxPipelineStages);
    t.stages = fitPipelineStages(available, getCtaStageBytes(t) +
                                                getScaleStageBytes(g, t));
  }
  t.scaleTensorMaps = p.isBlockScaled();

  bool pairCluster = t.clusterM == 2 && t.clusterN == 1;
  if (t.tileM == kPairTileM && !pairCluster)
    return op->emitOpError()
           << "the sm_100a tile M " << kPairTileM
           << " is the cta_group::2 variant: it needs cluster = 2x1 (a CTA "
              "pair, 128 rows each), got "
           << t.clusterM << "x" << t.clusterN;
  if (t.tileM != kTileM && t.tileM != kPairTileM)
    return op->emitOpError()
           << "the sm_100a kernels take tile M " << kTileM
           << " (cta_group::1, one TMEM lane per row) or " << kPairTileM
           << " with cluster = 2x1 (cta_group::2), got " << t.tileM;
  if (t.tileK != kTileK)
    return op->emitOpError() << "the sm_100a kernels take tile K " << kTileK
                             << " (one 128-byte swizzle span), got " << t.tileK;
  if (t.tileN % 16 != 0 || t.tileN < 16 || t.tileN > kMaxMmaN)
    return op->emitOpError()
           << "the sm_100a kernels take tile N a multiple of 16 in [16, "
           << kMaxMmaN
           << "] (two epilogue warpgroups of whole 8-column groups), got "
           << t.tileN;
  if (t.tileM == kTileM && (t.clusterM != 1 || t.clusterN != 1))
    return op->emitOpError()
           << "the sm_100a kernels take cluster = 2x1 only with tile M "
           << kPairTileM << " (the cta_group::2 CTA pair); tile M " << kTileM
           << " takes no cluster, got " << t.clusterM << "x" << t.clusterN;
  if (isCtaPair(t) && p.isBlockScaled())
    return op->emitOpError()
           << "the sm_100a cta_group::2 variant (tile M " << kPairTileM
           << ", cluster 2x1) takes kind::f8f6f4 (per-tensor or row-wise "
              "scales) only; MX and blockwise scales run with tile M "
           << kTileM << " and no cluster";

  if (t.stages < 1)
    return op->emitOpError()
           << "not one pipeline stage of a " << t.tileM << "x" << t.tileN
           << " tile fits in the " << target.maxSharedMemoryPerBlock
           << " bytes of shared memory of the target "
              "(max_shared_memory_per_block of #fp8.target): raise it or "
              "configure a smaller tile";
  if (p.isBlockScaled() && t.tileN % kMXAtomRows != 0)
    return op->emitOpError()
           << "the sm_100a MXFP8 kernels take tile N a multiple of "
           << kMXAtomRows << " (whole 128-row scale-factor atoms), got "
           << t.tileN;
  std::string error = checkMmaShape(/*blockScaled=*/p.isBlockScaled(),
                                    getCtaGroup(t), t.tileM, t.tileN, g.bMajor);
  if (!error.empty())
    return op->emitOpError() << "tcgen05.mma cannot run the tile: " << error;
  for (auto [name, tile] :
       {std::pair<StringRef, Fp8OperandTile>{"A", getATile(g, t)},
        {"B", getBTile(g, t)}}) {
    error = checkFp8OperandTile(tile);
    if (!error.empty())
      return op->emitOpError()
             << "the " << majorName(tile.major) << " " << name << " tile ("
             << tile.mnExtent << " x " << tile.kExtent
             << ", 128-byte swizzle) cannot feed tcgen05.mma: " << error;
    if (tile.major == blackwell::OperandMajor::MN &&
        tile.mnExtent % kSwizzle128BRowBytes != 0)
      return op->emitOpError()
             << "an MN-major " << name
             << " tile is loaded in 128-element TMA boxes: expected tile "
             << (name == "A" ? "M" : "N") << " a multiple of 128, got "
             << tile.mnExtent;
  }
  bool encoded =
      p.isBlockScaled()
          ? encodeInstrDescriptor(getBlockScaledInstrDescriptor(g, t), &error)
                .has_value()
          : encodeInstrDescriptor(getInstrDescriptor(g, t), &error).has_value();
  if (!encoded)
    return op->emitOpError() << "no tcgen05 instruction descriptor: " << error;
  if (p.isBlockScaled()) {
    if (!getBlockScaledTmemPlan(t, /*accumulatorStages=*/1, &error))
      return op->emitOpError()
             << "an accumulator of " << t.tileN << " columns and " << t.stages
             << " scale-factor slots do not fit Tensor Memory: " << error;
  } else if (!tmemAllocationColumns(kAccumulatorStages * t.tileN)) {
    return op->emitOpError() << "two accumulators of " << t.tileN
                             << " columns do not fit Tensor Memory";
  }
  int64_t smem = getDynamicSharedMemoryBytes(g, t);
  if (smem > target.maxSharedMemoryPerBlock)
    return op->emitOpError()
           << "the kernel configuration needs " << smem
           << " bytes of shared memory, more than the "
           << target.maxSharedMemoryPerBlock << " " << target.chip.name
           << " offers: use fewer stages or a "
              "smaller tile";
  assert(!t.swapAB && "swap-AB is an sm_90a tiling: the sm_100a kernels "
                      "have no operand-role swap");
  return t;
}

std::string blackwell::getKernelName(const BlackwellGemm &g,
                                     const GemmTiling &t) {
  std::string name = getGemmKernelName(g.problem, t);
  // Blockwise on the block-scaled MMA: the scales are UE8M0 atoms.
  if (g.problem.blockwiseAsMX)
    name += "_mx";
  if (g.aMajor == blackwell::OperandMajor::MN)
    name += "_amn";
  if (g.bMajor == blackwell::OperandMajor::MN)
    name += "_bmn";
  return name;
}

//===----------------------------------------------------------------------===//
// Metadata
//===----------------------------------------------------------------------===//

md::KernelMetadata blackwell::buildKernelMetadata(StringRef name,
                                                  const ChipInfo &chip,
                                                  const BlackwellGemm &g,
                                                  const GemmTiling &t) {
  // A CTA pair's CTA loads and stores 128 rows of the 256-row tile (the
  // skeleton halves B's box by the cluster); the persistent grid counts
  // CTAs of those rows, so it launches one cluster per tile (rounded to the
  // cluster by the runtime).
  GemmTargetLayout layout;
  layout.threadsPerCta = kNumThreads;
  layout.ctaTileM = getCtaTileM(t);
  layout.dynamicSharedMemoryBytes = getDynamicSharedMemoryBytes(g, t);
  layout.aMNMajor = g.aMajor == blackwell::OperandMajor::MN;
  layout.bMNMajor = g.bMajor == blackwell::OperandMajor::MN;
  return buildGemmKernelMetadata(name, chip, g.problem, t, layout);
}

//===- BlackwellGemm.cpp - Warp-specialized FP8 GEMM for sm_100a ----------===//
//
// A persistent kernel of 384 threads: CTAs stride over output tiles (grouped
// raster order, the skeleton's scheduler).
// - Warp 0, one thread: TMA loads of A and B K-blocks into a ring of stages
//   (the skeleton's PipelineRing: full barriers complete on the TMA bytes).
// - Warp 1: owns Tensor Memory (allocates two accumulators of tile N
//   columns, frees them at exit); one elected thread issues the four
//   `tcgen05.mma.kind::f8f6f4` (K = 32) of each 128-K stage and
//   `tcgen05.commit`s the stage's empty barrier (the MMAs' completion frees
//   the stage) and, after a tile's last block, the accumulator's "full"
//   barrier.
// - Warps 2, 3: idle (they keep the epilogue warpgroups aligned: a warp
//   reads TMEM lanes 32 * (warp % 4) onwards).
// - Warpgroups 1 and 2: the epilogue, each half of the tile's columns;
//   thread t of warp w owns tile row 32 (w % 4) + t (TMEM lane = row,
//   Layout D). Wait for the accumulator, `tcgen05.ld.32x32b` it in pieces
//   of at most 32 columns, release it ("empty" barrier) after the last
//   load, apply scales and bias, convert, and stage the tile for TMA stores
//   (bf16/f16) or store it directly (f32, accumulate-into-C).
//
// MXFP8 (`mx 1x32` on both operands): the scales arrive in the 128x4
// scale-factor atom layout; the producer loads each stage's atoms (A: one,
// B: tile N / 128) with a 3-D TMA load next to the tiles, into a scale area
// after the staging buffer. The MMA thread copies them into the stage's
// TMEM scale slot with `tcgen05.cp.32x128b.warpx4` and issues the four
// `tcgen05.mma.kind::mxf8f6f4.block_scale.block32` of the stage with scale
// factor IDs 0..3 (one UE8M0 byte of each TMEM cell per 32-K step). Each
// stage has its own slot: tcgen05.cp is ordered before later MMAs of the
// same thread (a pipelined pair), but not after earlier ones, so a slot is
// only rewritten after the stage's empty barrier (a tcgen05.commit of its
// MMAs) let the producer refill the stage. Tile N 256 leaves no TMEM for a
// second accumulator: those kernels run one accumulator (no epilogue
// overlap).
//
// Blockwise 1x128 / 128x128 power-of-two scales (f8E8M0FNU, or f32 under
// `#fp8.blockwise<scales = pow2>`) run this MX kernel unchanged: the host
// converts them to the atom layout (emulation::blockwiseScalesToMxAtoms:
// four equal bytes per 128-K group, 128x128 tiles broadcast to their rows),
// and the metadata says so (GemmProblem::blockwiseAsMX).
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToBlackwell/BlackwellGemm.h"
#include "FP8/Conversion/FP8ToBlackwell/TCGen05.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::blackwell;

static constexpr int64_t kMaxStages = 8;
static constexpr int64_t kTileM = 128;
static constexpr int64_t kTileK = 128;
/// 128-byte swizzle: the TMA box's inner extent in FP8 elements.
static constexpr int64_t kSwizzleBytes = 128;
static constexpr int64_t kTileNCandidates[] = {256, 224, 192, 160, 128};
/// Warp roles.
static constexpr int64_t kProducerWarp = 0;
static constexpr int64_t kMmaWarp = 1;
static constexpr int64_t kFirstEpilogueWarpgroup = 1;
static constexpr int64_t kEpilogueWarpgroups = 2;
static constexpr int64_t kEpilogueThreads =
    kEpilogueWarpgroups * kWarpgroupThreads;
/// Named barrier among the epilogue warpgroups (0 is __syncthreads).
static constexpr int64_t kEpilogueBarrierId = 1;
/// Widest TMEM load per piece (32x32b.x32: 32 registers per thread).
static constexpr int64_t kMaxLoadColumns = 32;
/// Threads per CTA: producer warpgroup and two epilogue warpgroups.
static constexpr int64_t kNumThreads = 3 * kWarpgroupThreads;
/// The cta_group::2 variant: a 2x1 cluster (a CTA pair) computes a 256-row
/// tile with one tcgen05.mma.cta_group::2 (M = 256) issued by the leader.
static constexpr int64_t kPairTileM = 2 * kTileM;

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
  for (auto [name, scale] : {std::pair<StringRef, Value>{"A", op.getAScaleInv()},
                             {"B", op.getBScaleInv()}}) {
    Type elem = cast<ShapedType>(scale.getType()).getElementType();
    if (isa<Float8E8M0FNUType>(elem) || recipe)
      continue;
    return op.emitOpError()
           << "the sm_100a block-scaled MMA takes blockwise " << name
           << " scales as f8E8M0FNU, or as f32 under a #fp8.blockwise<scales "
              "= pow2> recipe (the host converts powers of two to UE8M0); got "
           << elem << " with no such recipe, which may hold non-power-of-two "
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
  FailureOr<GemmProblem> problem =
      GemmProblem::get(op, /*allowMXScales=*/true);
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

/// The CTA pair variant (tile M 256, cluster 2x1, tcgen05 cta_group::2):
/// each CTA holds 128 rows of A and half of B's tile N rows in its shared
/// memory (PTX ISA 9.7.16, "CTA pair") and 128 rows of the accumulator in
/// its Tensor Memory.
static bool isCtaPair(const GemmTiling &t) { return t.clusterM == 2; }
static CtaGroup getCtaGroup(const GemmTiling &t) {
  return isCtaPair(t) ? CtaGroup::Two : CtaGroup::One;
}
/// Rows of A, rows of B (tile N columns) and output rows of one CTA.
static int64_t getCtaTileM(const GemmTiling &t) {
  return t.tileM / t.clusterM;
}
static int64_t getCtaBRows(const GemmTiling &t) {
  return t.tileN / t.clusterM;
}
/// Shared memory of one CTA's stage (A and B K-blocks).
static int64_t getCtaStageBytes(const GemmTiling &t) {
  return (getCtaTileM(t) + getCtaBRows(t)) * t.tileK;
}
/// One CTA's staging buffer of output rows (TMA-store epilogue).
static int64_t getCtaEpilogueBytes(const GemmTiling &t) {
  return t.tmaStoreEpilogue ? getCtaTileM(t) * t.tileN * t.outputBytes : 0;
}

/// The operand tiles of one stage as TMA writes them (one CTA's share).
static Fp8OperandTile getATile(const BlackwellGemm &g, const GemmTiling &t) {
  return Fp8OperandTile{g.aMajor, SwizzleMode::Swizzle128B, getCtaTileM(t),
                        t.tileK};
}
static Fp8OperandTile getBTile(const BlackwellGemm &g, const GemmTiling &t) {
  return Fp8OperandTile{g.bMajor, SwizzleMode::Swizzle128B, getCtaBRows(t),
                        t.tileK};
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

static BlockScaledInstrDescriptor
getBlockScaledInstrDescriptor(const BlackwellGemm &g, const GemmTiling &t) {
  return getCommonInstrDescriptor<BlockScaledInstrDescriptor>(g, t);
}

static F8F6F4InstrDescriptor getInstrDescriptor(const BlackwellGemm &g,
                                                const GemmTiling &t) {
  auto d = getCommonInstrDescriptor<F8F6F4InstrDescriptor>(g, t);
  d.dFormat = AccumulatorFormat::F32;
  return d;
}

/// Scale-factor atoms one stage loads per operand (MX only).
static int64_t getScaleAtomsA(const GemmTiling &t) {
  return t.tileM / kMXAtomRows;
}
static int64_t getScaleAtomsB(const GemmTiling &t) {
  return t.tileN / kMXAtomRows;
}

/// Shared memory of one stage's scale-factor atoms (0 without MX scales).
static int64_t getScaleStageBytes(const BlackwellGemm &g, const GemmTiling &t) {
  if (!g.problem.isBlockScaled())
    return 0;
  return (getScaleAtomsA(t) + getScaleAtomsB(t)) * kMXAtomBytes;
}

/// The TMEM plan of an MX kernel with `accumulatorStages` accumulators and
/// one scale slot per pipeline stage.
static std::optional<BlockScaledTmemPlan>
getBlockScaledTmemPlan(const GemmTiling &t, int64_t accumulatorStages,
                       std::string *error = nullptr) {
  return planBlockScaledTmem(t.tileN, accumulatorStages, error,
                             /*scaleSlots=*/t.stages);
}

/// TMEM accumulators: two (the epilogue of a tile overlaps the next tile's
/// MMAs) unless an MX kernel's scale slots leave no room for the second.
static int64_t getAccumulatorStages(const BlackwellGemm &g,
                                    const GemmTiling &t) {
  if (g.problem.isBlockScaled() && !getBlockScaledTmemPlan(t, kAccumulatorStages))
    return 1;
  return kAccumulatorStages;
}

/// Columns tcgen05.alloc must provide (0 when they do not fit).
static int64_t getTmemColumns(const BlackwellGemm &g, const GemmTiling &t) {
  if (g.problem.isBlockScaled()) {
    std::optional<BlockScaledTmemPlan> plan =
        getBlockScaledTmemPlan(t, getAccumulatorStages(g, t));
    return plan ? plan->allocatedColumns : 0;
  }
  return tmemAllocationColumns(kAccumulatorStages * t.tileN).value_or(0);
}

/// Shared memory after the stages and the staging buffer: the ring's
/// barriers, the accumulator full/empty barriers, the TMEM address slot.
static int64_t getBarrierBytes(int64_t stages) {
  return PipelineRing::barrierBytes(stages) + 2 * 8 * kAccumulatorStages + 8;
}

int64_t blackwell::getDynamicSharedMemoryBytes(const BlackwellGemm &g,
                                               const GemmTiling &t) {
  return t.stages * (getCtaStageBytes(t) + getScaleStageBytes(g, t)) +
         getCtaEpilogueBytes(t) + getBarrierBytes(t.stages);
}

static int64_t pickTileN(int64_t n, int64_t multipleOf) {
  int64_t best = 0;
  int64_t bestPadded = INT64_MAX;
  for (int64_t candidate : kTileNCandidates) {
    if (candidate % multipleOf != 0)
      continue;
    int64_t padded = contract::ceilDiv(n, candidate) * candidate;
    if (padded < bestPadded) {
      best = candidate;
      bestPadded = padded;
    }
  }
  return best;
}

static const char *majorName(blackwell::OperandMajor major) {
  return major == blackwell::OperandMajor::K ? "K-major" : "MN-major";
}

FailureOr<GemmTiling> blackwell::selectGemmTiling(ScaledMatmulOp op,
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
      return op.emitOpError()
             << "the sm_100a kernels have no stream-K schedule: drop "
                "`stream_k = true` from the gemm_config";
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
      multipleOf = std::max(multipleOf, kSwizzleBytes);
    if (p.isBlockScaled())
      multipleOf = std::max(multipleOf, kMXAtomRows);
    t.tileN = pickTileN(p.n, multipleOf);
    int64_t available = target.maxSharedMemoryPerBlock -
                        getCtaEpilogueBytes(t) - getBarrierBytes(kMaxStages);
    t.stages = std::min<int64_t>(
        kMaxStages,
        available / (getCtaStageBytes(t) + getScaleStageBytes(g, t)));
  }
  t.scaleTensorMaps = p.isBlockScaled();

  bool pairCluster = t.clusterM == 2 && t.clusterN == 1;
  if (t.tileM == kPairTileM && !pairCluster)
    return op.emitOpError()
           << "the sm_100a tile M " << kPairTileM
           << " is the cta_group::2 variant: it needs cluster = 2x1 (a CTA "
              "pair, 128 rows each), got "
           << t.clusterM << "x" << t.clusterN;
  if (t.tileM != kTileM && t.tileM != kPairTileM)
    return op.emitOpError() << "the sm_100a kernels take tile M " << kTileM
                            << " (cta_group::1, one TMEM lane per row) or "
                            << kPairTileM
                            << " with cluster = 2x1 (cta_group::2), got "
                            << t.tileM;
  if (t.tileK != kTileK)
    return op.emitOpError() << "the sm_100a kernels take tile K " << kTileK
                            << " (one 128-byte swizzle span), got " << t.tileK;
  if (t.tileN % 16 != 0 || t.tileN < 16 || t.tileN > 256)
    return op.emitOpError()
           << "the sm_100a kernels take tile N a multiple of 16 in [16, 256] "
              "(two epilogue warpgroups of whole 8-column groups), got "
           << t.tileN;
  if (t.tileM == kTileM && (t.clusterM != 1 || t.clusterN != 1))
    return op.emitOpError()
           << "the sm_100a kernels take cluster = 2x1 only with tile M "
           << kPairTileM << " (the cta_group::2 CTA pair); tile M " << kTileM
           << " takes no cluster, got " << t.clusterM << "x" << t.clusterN;
  if (isCtaPair(t) && p.isBlockScaled())
    return op.emitOpError()
           << "the sm_100a cta_group::2 variant (tile M " << kPairTileM
           << ", cluster 2x1) takes kind::f8f6f4 (per-tensor or row-wise "
              "scales) only; MX and blockwise scales run with tile M "
           << kTileM << " and no cluster";

  if (t.stages < 1)
    return op.emitOpError()
           << "not one pipeline stage of a " << t.tileM << "x" << t.tileN
           << " tile fits in the " << target.maxSharedMemoryPerBlock
           << " bytes of shared memory of the target "
              "(max_shared_memory_per_block of #fp8.target): raise it or "
              "configure a smaller tile";
  if (p.isBlockScaled() && t.tileN % kMXAtomRows != 0)
    return op.emitOpError()
           << "the sm_100a MXFP8 kernels take tile N a multiple of "
           << kMXAtomRows << " (whole 128-row scale-factor atoms), got "
           << t.tileN;
  std::string error = checkMmaShape(/*blockScaled=*/p.isBlockScaled(), getCtaGroup(t),
                                    t.tileM, t.tileN, g.bMajor);
  if (!error.empty())
    return op.emitOpError() << "tcgen05.mma cannot run the tile: " << error;
  for (auto [name, tile] : {std::pair<StringRef, Fp8OperandTile>{
                                "A", getATile(g, t)},
                            {"B", getBTile(g, t)}}) {
    error = checkFp8OperandTile(tile);
    if (!error.empty())
      return op.emitOpError()
             << "the " << majorName(tile.major) << " " << name << " tile ("
             << tile.mnExtent << " x " << tile.kExtent
             << ", 128-byte swizzle) cannot feed tcgen05.mma: " << error;
    if (tile.major == blackwell::OperandMajor::MN &&
        tile.mnExtent % kSwizzleBytes != 0)
      return op.emitOpError()
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
    return op.emitOpError() << "no tcgen05 instruction descriptor: " << error;
  if (p.isBlockScaled()) {
    if (!getBlockScaledTmemPlan(t, /*accumulatorStages=*/1, &error))
      return op.emitOpError()
             << "an accumulator of " << t.tileN << " columns and " << t.stages
             << " scale-factor slots do not fit Tensor Memory: " << error;
  } else if (!tmemAllocationColumns(kAccumulatorStages * t.tileN)) {
    return op.emitOpError() << "two accumulators of " << t.tileN
                            << " columns do not fit Tensor Memory";
  }
  int64_t smem = getDynamicSharedMemoryBytes(g, t);
  if (smem > target.maxSharedMemoryPerBlock)
    return op.emitOpError() << "the kernel configuration needs " << smem
                            << " bytes of shared memory, more than the "
                            << target.maxSharedMemoryPerBlock << " "
                            << target.chip.name
                            << " offers: use fewer stages or a "
                               "smaller tile";
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

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

namespace {
struct KernelValues : GemmKernelParams {
  Value tid, warp;
  Value smem;
  Value epilogueBuffer;
  /// MX: the stages' scale-factor atoms (stage s at s * scale stage bytes:
  /// A's atom, then B's).
  Value scaleBuffer;
  PipelineRing ring;
  /// Accumulator barriers: full (MMA -> epilogue, one tcgen05.commit) and
  /// empty (epilogue -> MMA, every epilogue thread).
  Value accFullBase, accEmptyBase;
  /// Shared word tcgen05.alloc writes the TMEM address to.
  Value tmemSlot;
  Value numMTiles, numTiles;
  /// CTA pair (cta_group::2) only: this CTA's rank in the pair, the pair's
  /// cluster index and the number of clusters (work is scheduled in units
  /// of clusters); null otherwise.
  Value clusterRank, firstUnit, unitStride;
};
} // namespace

/// The first tile and the stride of a CTA's persistent loop: per CTA, or per
/// cluster for the CTA pair (both CTAs of a pair work on the same tile).
static Value firstTile(KernelBuilder &kb, const KernelValues &v) {
  return v.firstUnit ? v.firstUnit : kb.blockIdX();
}
static Value tileStride(KernelBuilder &kb, const KernelValues &v) {
  return v.unitStride ? v.unitStride : kb.gridDimX();
}

static Value barrierAt(KernelBuilder &kb, Value base, Value index) {
  return kb.bytePtr(base, kb.mul(index, kb.i32(8)));
}

static void emitProducer(KernelBuilder &kb, const BlackwellGemm &g,
                         const GemmTiling &t, const KernelValues &v) {
  const GemmProblem &p = g.problem;
  Fp8OperandTile aTile = getATile(g, t), bTile = getBTile(g, t);
  bool pair = isCtaPair(t);
  kb.ifThen(kb.eq(v.tid, kb.i32(0)), [&] {
    int64_t kBlocks = p.numKBlocks(t.tileK);
    ValueRange last = kb.forLoop(
        firstTile(kb, v), v.numTiles, tileStride(kb, v), {kb.i32(0)},
        [&](Value tile, ValueRange state) {
          TileCoordinate coord = emitGroupedTileCoordinate(
              kb, tile, v.numMTiles, t.numNTiles(p.n), t.rasterGroup);
          Value mOffset = kb.mul(coord.mTile, kb.i32(t.tileM));
          Value nOffset = kb.mul(coord.nTile, kb.i32(t.tileN));
          if (pair) {
            // This CTA's share: 128 rows of A, half of B's rows.
            mOffset = kb.add(mOffset,
                             kb.mul(v.clusterRank, kb.i32(getCtaTileM(t))));
            nOffset = kb.add(nOffset,
                             kb.mul(v.clusterRank, kb.i32(getCtaBRows(t))));
          }
          ValueRange next = kb.forLoop(
              kb.i32(0), kb.i32(kBlocks), kb.i32(1), {state[0]},
              [&](Value kBlock, ValueRange inner) {
                Value iteration = inner[0];
                Value stage = v.ring.stage(kb, iteration);
                kb.mbarrierWait(v.ring.emptyBarrier(kb, stage),
                                v.ring.producerParity(kb, iteration));
                Value full = v.ring.fullBarrier(kb, stage);
                if (pair) {
                  // Both CTAs' loads complete on the leader's full barrier,
                  // the one its MMA issuer waits on; the leader expects the
                  // pair's bytes (a peer's complete_tx may come first: the
                  // phase cannot complete before the leader's arrival).
                  Value leaderFull = emitPeerBarrier(kb, full, kb.i32(0));
                  kb.ifThen(kb.eq(v.clusterRank, kb.i32(0)), [&] {
                    kb.mbarrierArriveExpectTx(
                        full, t.clusterM * getCtaStageBytes(t));
                  });
                  full = leaderFull;
                } else {
                  // Out-of-bounds box elements are zero-filled and counted.
                  kb.mbarrierArriveExpectTx(full, getCtaStageBytes(t) +
                                                      getScaleStageBytes(g, t));
                }
                Value aPtr = kb.bytePtr(
                    v.smem, kb.mul(stage, kb.i32(getCtaStageBytes(t))));
                Value bPtr = kb.bytePtr(aPtr, getCtaTileM(t) * t.tileK);
                Value kOffset = kb.mul(kBlock, kb.i32(t.tileK));
                auto load2d = [&](Value dst, Value map, Value inner,
                                  Value outer) {
                  if (pair)
                    emitTmaLoad(kb, dst, map, {inner, outer}, full,
                                CtaGroup::Two);
                  else
                    kb.tmaLoad2d(dst, map, inner, outer, full);
                };
                auto load = [&](const Fp8OperandTile &tile, Value dst,
                                Value map, Value mnOffset) {
                  if (tile.major == blackwell::OperandMajor::K) {
                    load2d(dst, map, kOffset, mnOffset);
                    return;
                  }
                  // Stored [K, MN]: boxes of 128 MN x tile K, one per
                  // 128-byte chunk of the tile (Fp8OperandTile's layout).
                  for (int64_t j = 0; j < tile.mnExtent / kSwizzleBytes; ++j)
                    load2d(kb.bytePtr(dst, j * kSwizzleBytes * tile.kExtent),
                           map, kb.add(mnOffset, kb.i32(j * kSwizzleBytes)),
                           kOffset);
                };
                load(aTile, aPtr, v.tmaA, mOffset);
                load(bTile, bPtr, v.tmaB, nOffset);
                if (p.isBlockScaled()) {
                  // The atoms of this 128-K block: 3-D boxes (128 bytes,
                  // 4 atom rows, tile / 128 atoms) at K group kBlock.
                  Value sfaPtr = kb.bytePtr(
                      v.scaleBuffer,
                      kb.mul(stage, kb.i32(getScaleStageBytes(g, t))));
                  Value sfbPtr =
                      kb.bytePtr(sfaPtr, getScaleAtomsA(t) * kMXAtomBytes);
                  Value atomRow = kb.mul(kBlock, kb.i32(4));
                  emitTmaLoad(kb, sfaPtr, v.aScaleInv,
                              {kb.i32(0), atomRow,
                               kb.mul(coord.mTile, kb.i32(getScaleAtomsA(t)))},
                              full);
                  emitTmaLoad(kb, sfbPtr, v.bScaleInv,
                              {kb.i32(0), atomRow,
                               kb.mul(coord.nTile, kb.i32(getScaleAtomsB(t)))},
                              full);
                }
                return SmallVector<Value>{kb.add(iteration, kb.i32(1))};
              });
          return SmallVector<Value>{next[0]};
        });
    if (pair) {
      // The leader's MMAs still read this CTA's stages and their commits
      // still arrive on its empty barriers: wait for every stage's last
      // release before the CTA may leave (the producer tail).
      for (int64_t s = 0; s < t.stages; ++s) {
        Value iteration = kb.add(last[0], kb.i32(s));
        kb.mbarrierWait(v.ring.emptyBarrier(kb, v.ring.stage(kb, iteration)),
                        v.ring.producerParity(kb, iteration));
      }
    }
  });
}

static void emitMmaIssuer(KernelBuilder &kb, const BlackwellGemm &g,
                          const GemmTiling &t, const KernelValues &v,
                          Value tmemBase) {
  ImplicitLocOpBuilder &b = kb.builder();
  const GemmProblem &p = g.problem;
  Fp8OperandTile aTile = getATile(g, t), bTile = getBTile(g, t);
  bool mx = p.isBlockScaled();
  uint32_t instrDescriptor = static_cast<uint32_t>(expectEncoded(
      mx ? encodeInstrDescriptor(getBlockScaledInstrDescriptor(g, t))
         : encodeInstrDescriptor(getInstrDescriptor(g, t)),
      "instruction descriptor"));
  int64_t accStages = getAccumulatorStages(g, t);
  std::optional<BlockScaledTmemPlan> plan;
  if (mx)
    plan = getBlockScaledTmemPlan(t, accStages);
  Value scaleAddress = mx ? kb.sharedAddress(v.scaleBuffer) : Value();
  int64_t kBlocks = p.numKBlocks(t.tileK);
  Value smemAddress = kb.sharedAddress(v.smem);
  // One thread of the warp issues every MMA and commit (tcgen05.commit
  // tracks the MMAs of the issuing thread); the whole warp waits.
  Value isIssuer = emitElectOne(kb);
  Value trueValue = arith::ConstantIntOp::create(b, 1, 1);
  CtaGroup group = getCtaGroup(t);
  // The pair's commits arrive on the barrier at the same offset in both
  // CTAs.
  auto commit = [&](Value barrier) {
    if (isCtaPair(t))
      emitCommitMulticast(kb, barrier, /*ctaMask=*/0b11);
    else
      emitCommit(kb, barrier);
  };
  kb.forLoop(
      firstTile(kb, v), v.numTiles, tileStride(kb, v), {kb.i32(0), kb.i32(0)},
      [&](Value, ValueRange state) {
        Value iterationIn = state[0];
        Value tileCount = state[1];
        Value accStage = kb.remu(tileCount, kb.i32(accStages));
        Value accRound = kb.divu(tileCount, kb.i32(accStages));
        // Wait until the epilogue has read this accumulator (the first
        // round passes at once).
        kb.mbarrierWait(barrierAt(kb, v.accEmptyBase, accStage),
                        kb.andi(kb.add(accRound, kb.i32(1)), kb.i32(1)));
        emitFenceAfterThreadSync(kb);
        Value d = emitTmemAddress(kb, tmemBase, {},
                                  kb.mul(accStage, kb.i32(t.tileN)));
        ValueRange loop = kb.forLoop(
            kb.i32(0), kb.i32(kBlocks), kb.i32(1), {iterationIn},
            [&](Value kBlock, ValueRange carried) {
              Value iteration = carried[0];
              Value stage = v.ring.stage(kb, iteration);
              kb.mbarrierWait(v.ring.fullBarrier(kb, stage),
                              v.ring.consumerParity(kb, iteration));
              emitFenceAfterThreadSync(kb);
              Value stageAddress =
                  kb.add(smemAddress, kb.mul(stage, kb.i32(getCtaStageBytes(t))));
              Value aAddress = stageAddress;
              Value bAddress =
                  kb.add(stageAddress, kb.i32(getCtaTileM(t) * t.tileK));
              Value firstBlock = kb.eq(kBlock, kb.i32(0));
              Value accumulate = arith::XOrIOp::create(b, firstBlock, trueValue);
              kb.ifThen(isIssuer, [&] {
                if (mx) {
                  // The stage's atoms into its TMEM scale slot (lane 0;
                  // warpx4 fills all four lane quarters). tcgen05.cp ->
                  // tcgen05.mma of this thread is a pipelined pair: no
                  // fence between them.
                  Value atoms = kb.add(
                      scaleAddress,
                      kb.mul(stage, kb.i32(getScaleStageBytes(g, t))));
                  Value sfaColumn = kb.add(
                      kb.i32(plan->scaleAColumn),
                      kb.mul(stage, kb.i32(plan->scaleAColumnsPerSlot)));
                  Value sfbColumn = kb.add(
                      kb.i32(plan->scaleBColumn),
                      kb.mul(stage, kb.i32(plan->scaleBColumnsPerSlot)));
                  for (int64_t j = 0; j < getScaleAtomsA(t); ++j)
                    emitScaleFactorCopy(
                        kb,
                        emitTmemAddress(
                            kb, tmemBase, {},
                            kb.add(sfaColumn,
                                   kb.i32(j * sf_atom::kTmemColumnsPerAtom))),
                        kb.add(atoms, kb.i32(j * kMXAtomBytes)));
                  Value sfbAtoms =
                      kb.add(atoms, kb.i32(getScaleAtomsA(t) * kMXAtomBytes));
                  for (int64_t j = 0; j < getScaleAtomsB(t); ++j)
                    emitScaleFactorCopy(
                        kb,
                        emitTmemAddress(
                            kb, tmemBase, {},
                            kb.add(sfbColumn,
                                   kb.i32(j * sf_atom::kTmemColumnsPerAtom))),
                        kb.add(sfbAtoms, kb.i32(j * kMXAtomBytes)));
                  Value scaleA = emitTmemAddress(kb, tmemBase, {}, sfaColumn);
                  Value scaleB = emitTmemAddress(kb, tmemBase, {}, sfbColumn);
                  for (int64_t s = 0; s < t.tileK / kMmaK; ++s) {
                    // K step s of the stage's K group reads byte s of each
                    // scale cell.
                    unsigned id = selectScaleFactor(s).scaleFactorId;
                    uint32_t idesc = static_cast<uint32_t>(expectEncoded(
                        withScaleFactorIds(instrDescriptor, id, id),
                        "scale factor IDs"));
                    emitMmaBlockScaled(
                        kb, d, emitOperandDescriptor(kb, aAddress, aTile, s),
                        emitOperandDescriptor(kb, bAddress, bTile, s), idesc,
                        s == 0 ? accumulate : trueValue, scaleA, scaleB);
                  }
                } else {
                  for (int64_t s = 0; s < t.tileK / kMmaK; ++s)
                    emitMmaF8F6F4(
                        kb, d, emitOperandDescriptor(kb, aAddress, aTile, s),
                        emitOperandDescriptor(kb, bAddress, bTile, s),
                        instrDescriptor, s == 0 ? accumulate : trueValue,
                        group);
                }
                // The stage is free once these MMAs have read it.
                commit(v.ring.emptyBarrier(kb, stage));
              });
              return SmallVector<Value>{kb.add(iteration, kb.i32(1))};
            });
        // The accumulator is complete once every MMA of the tile is.
        kb.ifThen(isIssuer, [&] {
          commit(barrierAt(kb, v.accFullBase, accStage));
        });
        return SmallVector<Value>{loop[0], kb.add(tileCount, kb.i32(1))};
      });
}

/// `values` as a vector of `type` elements (converted from f32).
static Value packVector(KernelBuilder &kb, ArrayRef<Value> values, Type type) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto f32Vector = VectorType::get({static_cast<int64_t>(values.size())},
                                   b.getF32Type());
  Value vec = LLVM::UndefOp::create(b, f32Vector);
  for (auto [i, x] : llvm::enumerate(values))
    vec = LLVM::InsertElementOp::create(b, vec, x, kb.i32(i));
  if (type.isF32())
    return vec;
  return arith::TruncFOp::create(
      b, VectorType::get({static_cast<int64_t>(values.size())}, type), vec);
}

static void emitEpilogue(KernelBuilder &kb, const BlackwellGemm &g,
                         const GemmTiling &t, const KernelValues &v,
                         Value tmemBase) {
  ImplicitLocOpBuilder &b = kb.builder();
  const GemmProblem &p = g.problem;
  Value epilogueThread =
      kb.sub(v.tid, kb.i32(kFirstEpilogueWarpgroup * kWarpgroupThreads));
  Value half = kb.divu(epilogueThread, kb.i32(kWarpgroupThreads));
  Value warpInGroup = kb.remu(v.warp, kb.i32(4));
  Value lane = kb.remu(v.tid, kb.i32(kWarpThreads));
  Value laneBase = kb.mul(warpInGroup, kb.i32(tmem::kLanesPerWarp));
  Value rowInTile = kb.add(laneBase, lane);
  int64_t halfColumns = t.tileN / kEpilogueWarpgroups;
  Value halfColumn = kb.mul(half, kb.i32(halfColumns));
  Value isStoreThread = kb.eq(epilogueThread, kb.i32(0));
  bool guardColumns = p.n % t.tileN != 0;
  Value mLast = kb.sub(v.m, kb.i32(1));

  int64_t accStages = getAccumulatorStages(g, t);
  Value tensorScale;
  if (p.aScale == ScaleMode::Tensor)
    tensorScale = kb.loadF32(v.aScaleInv, kb.i32(0));
  if (p.bScale == ScaleMode::Tensor) {
    Value s = kb.loadF32(v.bScaleInv, kb.i32(0));
    tensorScale = tensorScale ? arith::MulFOp::create(b, tensorScale, s) : s;
  }
  // Pieces of the thread's columns: 32 at a time, then 16 and 8.
  SmallVector<std::pair<int64_t, int64_t>> pieces;
  for (int64_t start = 0; start < halfColumns;) {
    int64_t width = kMaxLoadColumns;
    while (start + width > halfColumns)
      width /= 2;
    pieces.push_back({start, width});
    start += width;
  }
  int64_t outBytes = t.outputBytes;
  int64_t boxBytes = getCtaTileM(t) * 128;
  bool pair = isCtaPair(t);

  kb.forLoop(
      firstTile(kb, v), v.numTiles, tileStride(kb, v), {kb.i32(0)},
      [&](Value tile, ValueRange state) {
        Value tileCount = state[0];
        Value accStage = kb.remu(tileCount, kb.i32(accStages));
        Value accRound = kb.divu(tileCount, kb.i32(accStages));
        TileCoordinate coord = emitGroupedTileCoordinate(
            kb, tile, v.numMTiles, t.numNTiles(p.n), t.rasterGroup);
        Value mOffset = kb.mul(coord.mTile, kb.i32(t.tileM));
        if (pair)
          // This CTA's 128 rows: its own TMEM lanes hold them.
          mOffset = kb.add(mOffset,
                           kb.mul(v.clusterRank, kb.i32(getCtaTileM(t))));
        Value nOffset = kb.mul(coord.nTile, kb.i32(t.tileN));
        Value row = kb.add(mOffset, rowInTile);
        Value rowScale;
        if (p.aScale == ScaleMode::Row)
          rowScale = kb.loadF32(v.aScaleInv, kb.minu(row, mLast));
        if (t.tmaStoreEpilogue) {
          // The previous tile's stores must have read the staging buffer.
          kb.ifThen(isStoreThread,
                    [&] { kb.bulkWaitGroup(0, /*readOnly=*/true); });
          kb.namedBarrier(kEpilogueBarrierId, kEpilogueThreads);
        }
        kb.mbarrierWait(barrierAt(kb, v.accFullBase, accStage),
                        kb.andi(accRound, kb.i32(1)));
        emitFenceAfterThreadSync(kb);
        Value accColumn = kb.add(kb.mul(accStage, kb.i32(t.tileN)), halfColumn);
        Value rowInBounds = kb.ult(row, v.m);
        // This tile's max |D| (elements inside D only), flushed below.
        Value runningAmax = p.outputAmax ? kb.f32(0.0f) : Value();
        for (auto [pieceIndex, piece] : llvm::enumerate(pieces)) {
          auto [start, width] = piece;
          SmallVector<Value> acc = emitTmemLoad32x32b(
              kb,
              emitTmemAddress(kb, tmemBase, laneBase,
                              kb.add(accColumn, kb.i32(start))),
              width);
          emitTmemWaitLoad(kb);
          if (pieceIndex + 1 == pieces.size()) {
            // Every TMEM read of this tile is done: hand the accumulator
            // back to the MMA warp.
            emitFenceBeforeThreadSync(kb);
            Value empty = barrierAt(kb, v.accEmptyBase, accStage);
            if (pair)
              // The leader's MMA warp waits for both CTAs' epilogues.
              NVVM::MBarrierArriveOp::create(
                  b, /*res=*/Type(), kb.mapToClusterRank(empty, kb.i32(0)),
                  /*count=*/Value(), NVVM::MemScopeKind::CLUSTER,
                  /*relaxed=*/false);
            else
              kb.mbarrierArrive(empty);
          }
          // Tile-relative first column of the piece.
          Value pieceColumn = kb.add(halfColumn, kb.i32(start));
          Value firstColumn = kb.add(nOffset, pieceColumn);
          for (int64_t j = 0; j < width; ++j) {
            Value x = acc[j];
            if (tensorScale)
              x = arith::MulFOp::create(b, x, tensorScale);
            if (rowScale)
              x = arith::MulFOp::create(b, x, rowScale);
            if (p.bScale == ScaleMode::Row || p.biasElementType) {
              Value col = kb.add(firstColumn, kb.i32(j));
              if (guardColumns)
                col = kb.minu(col, kb.i32(p.n - 1));
              if (p.bScale == ScaleMode::Row)
                x = arith::MulFOp::create(b, x, kb.loadF32(v.bScaleInv, col));
              if (p.biasElementType) {
                Value y = kb.load(
                    p.biasElementType,
                    kb.globalElementPtr(v.bias, col,
                                     p.biasElementType.getIntOrFloatBitWidth() /
                                         8));
                if (!p.biasElementType.isF32())
                  y = arith::ExtFOp::create(b, b.getF32Type(), y);
                x = arith::AddFOp::create(b, x, y);
              }
            }
            if (p.activation)
              x = emitActivation(kb, *p.activation, x);
            if (runningAmax)
              runningAmax = emitAmaxUpdate(
                  kb, runningAmax, x, p.outElementType,
                  kb.andi(rowInBounds,
                          kb.ult(kb.add(firstColumn, kb.i32(j)),
                                 kb.i32(p.n))));
            acc[j] = x;
          }
          if (t.tmaStoreEpilogue) {
            // 16-byte chunks (8 columns) into the 128-byte swizzled boxes:
            // box = column / 64, chunk (column % 64) / 8 stored at chunk
            // ^ (row % 8). A warp's 32 rows spread each store over all banks.
            int64_t chunkColumns = 16 / outBytes;
            int64_t boxColumns = t.storeBoxColumns();
            Value swizzle = kb.remu(rowInTile, kb.i32(8));
            for (int64_t j = 0; j < width; j += chunkColumns) {
              Value col = kb.add(pieceColumn, kb.i32(j));
              Value box = kb.divu(col, kb.i32(boxColumns));
              Value chunk =
                  kb.divu(kb.remu(col, kb.i32(boxColumns)), kb.i32(chunkColumns));
              Value offset = kb.add(
                  kb.add(kb.mul(box, kb.i32(boxBytes)),
                         kb.mul(rowInTile, kb.i32(128))),
                  kb.mul(arith::XOrIOp::create(b, chunk, swizzle), kb.i32(16)));
              Value packed = packVector(
                  kb, ArrayRef<Value>(acc).slice(j, chunkColumns),
                  p.outElementType);
              kb.store(packed, kb.bytePtr(v.epilogueBuffer, offset));
            }
          } else {
            // Direct stores of 4 columns (N % 16 == 0: a group is wholly
            // inside or outside the tensor).
            for (int64_t j = 0; j < width; j += 4) {
              Value col = kb.add(firstColumn, kb.i32(j));
              Value inBounds = rowInBounds;
              if (guardColumns)
                inBounds = kb.andi(inBounds, kb.ult(col, kb.i32(p.n)));
              kb.ifThen(inBounds, [&] {
                Value row64 = arith::ExtUIOp::create(b, b.getI64Type(), row);
                Value col64 = arith::ExtUIOp::create(b, b.getI64Type(), col);
                Value index = arith::AddIOp::create(
                    b, arith::MulIOp::create(b, row64, kb.i64(p.n)), col64);
                SmallVector<Value> group(acc.begin() + j, acc.begin() + j + 4);
                if (p.accumulateIntoC) {
                  auto f32x4 = VectorType::get({4}, b.getF32Type());
                  Value cGroup =
                      kb.load(f32x4, kb.globalElementPtr(v.c, index, 4));
                  for (int e = 0; e < 4; ++e)
                    group[e] = arith::AddFOp::create(
                        b, group[e],
                        LLVM::ExtractElementOp::create(b, cGroup, kb.i32(e)));
                }
                kb.store(packVector(kb, group, p.outElementType),
                         kb.globalElementPtr(v.d, index, outBytes));
              });
            }
          }
        }
        if (runningAmax)
          emitAmaxFlush(kb, runningAmax, v.amax, lane);
        if (t.tmaStoreEpilogue) {
          kb.fenceProxyAsyncShared();
          kb.namedBarrier(kEpilogueBarrierId, kEpilogueThreads);
          kb.ifThen(isStoreThread, [&] {
            int64_t boxColumns = t.storeBoxColumns();
            for (int64_t box = 0; box < t.tileN / boxColumns; ++box)
              kb.tmaStore2d(v.tmaD, kb.bytePtr(v.epilogueBuffer, box * boxBytes),
                            kb.add(nOffset, kb.i32(box * boxColumns)), mOffset);
            kb.bulkCommitGroup();
          });
        }
        return SmallVector<Value>{kb.add(tileCount, kb.i32(1))};
      });
  if (t.tmaStoreEpilogue)
    kb.ifThen(isStoreThread, [&] { kb.bulkWaitGroup(0, /*readOnly=*/false); });
}

gpu::GPUFuncOp blackwell::buildGemmKernel(OpBuilder &builder, Location loc,
                                          gpu::GPUModuleOp module,
                                          StringRef name,
                                          const BlackwellGemm &g,
                                          const GemmTiling &t) {
  const GemmProblem &p = g.problem;
  ensureDynamicSharedMemory(builder, loc, module);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  ImplicitLocOpBuilder b(loc, builder);
  KernelBuilder kb(b);

  KernelValues v{};
  auto func = createGemmKernelFunc(b, loc, name, p, t, kNumThreads, v);
  bool pair = isCtaPair(t);
  CtaGroup group = getCtaGroup(t);

  v.tid = kb.threadIdX();
  v.warp = kb.divu(v.tid, kb.i32(kWarpThreads));
  v.smem = kb.dynamicSharedMemory();
  // Shared memory: stages, staging buffer, MX scale atoms, ring barriers,
  // accumulator barriers, TMEM address slot.
  int64_t offset = t.stages * getCtaStageBytes(t);
  v.epilogueBuffer = kb.bytePtr(v.smem, offset);
  offset += getCtaEpilogueBytes(t);
  v.scaleBuffer = kb.bytePtr(v.smem, offset);
  offset += t.stages * getScaleStageBytes(g, t);
  v.ring = PipelineRing(kb.bytePtr(v.smem, offset), t.stages);
  offset += PipelineRing::barrierBytes(t.stages);
  v.accFullBase = kb.bytePtr(v.smem, offset);
  offset += 8 * kAccumulatorStages;
  v.accEmptyBase = kb.bytePtr(v.smem, offset);
  offset += 8 * kAccumulatorStages;
  v.tmemSlot = kb.bytePtr(v.smem, offset);
  int64_t tmemColumnsOrZero = getTmemColumns(g, t);
  uint32_t tmemColumns = static_cast<uint32_t>(expectEncoded(
      tmemColumnsOrZero ? std::optional<uint64_t>(tmemColumnsOrZero)
                        : std::nullopt,
      "TMEM allocation"));
  int64_t accStages = getAccumulatorStages(g, t);

  kb.ifThen(kb.eq(v.tid, kb.i32(0)), [&] {
    // Full: the producer's expect_tx arrival; empty: one tcgen05.commit.
    v.ring.init(kb, /*producerArrivals=*/1, /*consumerArrivals=*/1);
    for (int64_t s = 0; s < accStages; ++s) {
      kb.mbarrierInit(kb.bytePtr(v.accFullBase, 8 * s), 1);
      // The pair's leader waits for both CTAs' epilogues.
      kb.mbarrierInit(kb.bytePtr(v.accEmptyBase, 8 * s),
                      kEpilogueThreads * t.clusterM);
    }
    kb.prefetchTensorMap(v.tmaA);
    kb.prefetchTensorMap(v.tmaB);
    if (v.tmaD)
      kb.prefetchTensorMap(v.tmaD);
    if (t.scaleTensorMaps) {
      kb.prefetchTensorMap(v.aScaleInv);
      kb.prefetchTensorMap(v.bScaleInv);
    }
  });
  Value isMmaWarp = kb.eq(v.warp, kb.i32(kMmaWarp));
  // cta_group::2: the MMA warps of both CTAs allocate together (the same
  // columns in both Tensor Memories).
  kb.ifThen(isMmaWarp, [&] {
    emitTmemAlloc(kb, v.tmemSlot, tmemColumns, group);
    emitTmemRelinquishAllocPermit(kb, group);
  });
  // The TMEM address (and the barriers) are visible to every thread after
  // the barrier; the fences order the allocation around it.
  emitFenceBeforeThreadSync(kb);
  if (pair) {
    // The peer's TMA loads, commits and arrivals reach this CTA's
    // barriers: they must be initialized cluster-wide first.
    kb.ifThen(kb.eq(v.tid, kb.i32(0)), [&] { kb.fenceMBarrierInitCluster(); });
    kb.clusterSync();
    v.clusterRank = kb.clusterCtaRank();
    v.firstUnit = kb.divu(kb.blockIdX(), kb.i32(t.clusterM));
    v.unitStride = kb.divu(kb.gridDimX(), kb.i32(t.clusterM));
  } else {
    gpu::BarrierOp::create(b);
  }
  emitFenceAfterThreadSync(kb);
  Value tmemBase = kb.load(b.getI32Type(), v.tmemSlot);

  v.numMTiles = kb.ceilDiv(v.m, t.tileM);
  v.numTiles = kb.mul(v.numMTiles, kb.i32(t.numNTiles(p.n)));

  Value isEpilogue = arith::CmpIOp::create(
      b, arith::CmpIPredicate::uge, v.tid,
      kb.i32(kFirstEpilogueWarpgroup * kWarpgroupThreads));
  auto roles = scf::IfOp::create(b, isEpilogue, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard roleGuard(b);
    b.setInsertionPoint(roles.thenBlock()->getTerminator());
    emitEpilogue(kb, g, t, v, tmemBase);
    b.setInsertionPoint(roles.elseBlock()->getTerminator());
    kb.ifThen(kb.eq(v.warp, kb.i32(kProducerWarp)),
              [&] { emitProducer(kb, g, t, v); });
    // The pair's leader issues every MMA (cta_group::2).
    Value isIssuerWarp = isMmaWarp;
    if (pair)
      isIssuerWarp = kb.andi(isMmaWarp, kb.eq(v.clusterRank, kb.i32(0)));
    kb.ifThen(isIssuerWarp, [&] { emitMmaIssuer(kb, g, t, v, tmemBase); });
  }
  // Every TMEM read and MMA is done before the allocating warp frees it
  // (with a pair: in both CTAs, whose warps free together; neither CTA
  // leaves while its peer may still signal its barriers).
  emitFenceBeforeThreadSync(kb);
  if (pair)
    kb.clusterSync();
  else
    gpu::BarrierOp::create(b);
  kb.ifThen(isMmaWarp, [&] {
    emitFenceAfterThreadSync(kb);
    emitTmemDealloc(kb, tmemBase, tmemColumns, group);
  });
  gpu::ReturnOp::create(b);
  return func;
}

//===- HopperGemm.cpp - Warp-specialized FP8 GEMM for sm_90a --------------===//
//
// A persistent kernel: CTAs stride over output tiles (grouped raster order).
// Warpgroup 0 is the producer: one thread issues the TMA loads of A and B
// K-blocks into a ring of shared-memory stages; with blockwise scales, warp
// 1 copies each K block's scales next to its stage (cp.async). Warpgroups
// 1.. are consumers: each owns 64 rows of the tile and issues
// wgmma.mma_async m64nNk32 over the stage, then frees it. Promoted
// accumulation moves the partial sums of every 128-K block into an f32
// accumulator (scaled by the blockwise scales: per row of A, and per
// 128x128 tile or per column of B) with FMAs on the CUDA cores. The
// epilogue applies the remaining scales, bias and C, converts, and stores.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToHopper/HopperGemm.h"
#include "FP8/Conversion/FP8ToHopper/WGMMA.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::hopper;

static int64_t getByteWidth(Type t) { return t.getIntOrFloatBitWidth() / 8; }

/// Consumer warpgroups: each owns 64 rows of the tile.
static int64_t getNumConsumers(const GemmTiling &t) { return t.tileM / 64; }
/// A producer warpgroup and the consumers.
static int64_t getNumThreads(const GemmTiling &t) {
  return kWarpgroupThreads * (1 + getNumConsumers(t));
}
/// Shared memory of one pipeline stage's A and B tiles.
static int64_t getStageBytes(const GemmTiling &t) {
  return (t.tileM + t.tileN) * t.tileK;
}
/// The TMA-store epilogue's staging buffer.
static int64_t getEpilogueBytes(const GemmTiling &t) {
  return t.tmaStoreEpilogue ? t.tileM * 128 * t.numStagingBoxes() : 0;
}

/// setmaxnreg budgets (PTX ISA 9.7.19.5): the producer only issues TMA, the
/// consumers hold the accumulators. 40 * 128 + 232 * 256 <= 64K registers.
static constexpr int64_t kProducerRegisters = 40;
static constexpr int64_t kConsumerRegistersTwoWarpgroups = 232;
static constexpr int64_t kConsumerRegistersOneWarpgroup = 240;
static constexpr int64_t kMaxStages = 8;
/// The column parts of a promoted tile, issued and promoted in this order
/// (emitConsumer): the first about two thirds of the tile in a multiple of
/// 32 columns, so that its promotion takes less time than the second
/// part's MMAs, which alone leave the tensor cores idle while promoted.
/// For 192: 128 + 64, measured ahead of 96 + 96, 64 + 128 and 144 + 48
/// (H200, bench/NOTES.md v14).
static SmallVector<int64_t> getPromotionParts(int64_t tileN) {
  if (tileN < 64)
    return {tileN};
  int64_t first = std::min<int64_t>((2 * tileN + 95) / 96 * 32, tileN - 32);
  return {first, tileN - first};
}
/// 128x128 blockwise B scales cover 128 N rows.
static constexpr int64_t kScaleBlock = kBlockwiseScaleBlock;
/// Promoted accumulation keeps the K block's partial sums (in the parts of
/// getPromotionParts) and the promoted sums, tile N / 2 registers each per
/// thread: 2 x 96 of the 232 a consumer thread gets.
static constexpr int64_t kMaxPromotedTileN = 192;
/// The tiles of the launch variants of a dynamic-M kernel (tile M, tile N):
/// for M too small to fill the SMs with the large tiles.
static constexpr std::pair<int64_t, int64_t> kLaunchVariantTiles[] = {
    {128, 128}, {64, 128}, {64, 64}};
/// A fast kernel wider than 192 columns also gets a 128x192 variant: on an
/// H100 (bench/NOTES.md v16) the 192-wide fast tile and the 256-wide one
/// (both 4 stages, the latter staging its output in two boxes) computed
/// about the same output per SM and second (0.93-1.05x, mean 1.00x, on 13
/// shapes), so the variant wins wherever its waves hold less work
/// (4096x1536x7168: two waves either way, of 192-wide tiles instead of
/// 256-wide ones: 1.25x) and takes ties.
static constexpr std::pair<int64_t, int64_t> kFastTile = {128, 192};
static constexpr int64_t kFastTileThroughput = 101;

static SmallVector<std::pair<int64_t, int64_t>>
getLaunchVariantTiles(const GemmProblem &p, const GemmTiling &primary) {
  SmallVector<std::pair<int64_t, int64_t>> tiles;
  if (p.promoteInterval == 0 && primary.tileN > kFastTile.second)
    tiles.push_back(kFastTile);
  tiles.append(std::begin(kLaunchVariantTiles), std::end(kLaunchVariantTiles));
  return tiles;
}
/// Candidate tile N for the heuristic, largest first. With a TMA-store
/// epilogue the tile is a whole number of 128-byte store boxes.
static constexpr int64_t kTileNCandidates[] = {256, 224, 192, 160, 128};
/// Named barrier among the consumer warpgroups (0 is __syncthreads).
static constexpr int64_t kConsumerBarrierId = 1;

/// Shared memory for the stream-K schedule (StreamKField), after the
/// barriers.
static constexpr int64_t kStreamKScheduleBytes = 32;

static int64_t getStreamKScheduleOffset(const GemmTiling &t) {
  return t.stages * (getStageBytes(t) + t.stageScaleBytes) +
         getEpilogueBytes(t) + PipelineRing::barrierBytes(t.stages);
}

int64_t hopper::getDynamicSharedMemoryBytes(const GemmTiling &t) {
  return getStreamKScheduleOffset(t) + (t.streamK ? kStreamKScheduleBytes : 0);
}

namespace {
/// Which 128x128 B scale the 8-column groups of a tile use. Tiles start at
/// multiples of g = gcd(tile N, 128) in their 128-row block of B and meet at
/// most two blocks (tile N <= 128 + g). Column group j is in the tile's
/// first block iff the tile's offset in it is below 128 - 8j, i.e. below
/// roundup(128 - 8j, g): groups below g are always in the first block,
/// groups from 128 on always in the second, and groups with the same bound
/// in between choose alike. Each such class of groups gets one slot in the
/// stage's scale slot, filled by the producer with the right block's scale, so
/// that the consumers index scales by compile-time class only.
struct BScaleClasses {
  /// Per class: 0 (always the first block), kScaleBlock (always the
  /// second), or the bound below which the tile's offset picks the first.
  SmallVector<int64_t> bounds;
  /// Per column group j: its class.
  SmallVector<int64_t> classOfGroup;

  explicit BScaleClasses(const GemmTiling &t) {
    int64_t g = std::gcd(t.tileN, kScaleBlock);
    for (int64_t j = 0; j < t.tileN / 8; ++j) {
      int64_t bound = 8 * j < g               ? 0
                      : 8 * j >= kScaleBlock ? kScaleBlock
                                             : (kScaleBlock - 8 * j + g - 1) / g * g;
      auto *it = llvm::find(bounds, bound);
      classOfGroup.push_back(it - bounds.begin());
      if (it == bounds.end())
        bounds.push_back(bound);
    }
  }
};
} // namespace

/// The scale slot of a blockwise stage: the K block's A scales of the tile's
/// rows, then its B scale(s) (128x128 B tiles) or the B scales of the tile's
/// columns (1x128 B tiles), f32, padded to 16 bytes.
static int64_t getStageScaleBytes(const GemmProblem &p, const GemmTiling &t) {
  if (!p.isBlockwise())
    return 0;
  int64_t bScales = p.hasBlockwiseColumnScales()
                        ? t.tileN
                        : BScaleClasses(t).bounds.size();
  return (4 * (t.tileM + bScales) + 15) / 16 * 16;
}

/// Bulk copies (cp.async.bulk) move 16-byte aligned multiples of 16 bytes.
static constexpr int64_t kBulkCopyAlignment = 16;

/// The blockwise scale slot of `t`'s stages and the alignment its copies
/// (emitScaleCopies) ask of the scale tensors.
static void setScaleSlots(const GemmProblem &p, GemmTiling &t) {
  t.stageScaleBytes = getStageScaleBytes(p, t);
  t.blockwiseScaleAlignment = t.stageScaleBytes ? kBulkCopyAlignment : 0;
}

/// Tile N of a promoted kernel: 192 or 128. A wider
/// tile spends the per-K-block wait and promotion on more MMAs (H100,
/// tensorwise, M >= 4096: geomean 1.11x the 128-wide tile; bench/NOTES.md),
/// a narrower one pads N less and, for a small M, keeps more SMs busy. The
/// cost model is the number of waves over `numSMs` (with the static M when
/// the IR has one, else M large, where waves grow with the padded N) times
/// the tile's time, the 128-wide tile running at 0.9 of the 192-wide one's
/// rate. 1x128 B scales (one per column) keep 128: a wider tile's column
/// scales do not fit the registers.
static int64_t pickPromotedTileN(const GemmProblem &p, int64_t numSMs) {
  if (p.hasBlockwiseColumnScales())
    return kScaleBlock;
  auto cost = [&](int64_t tileN, double rate) {
    int64_t nTiles = contract::ceilDiv(p.n, tileN);
    double work = static_cast<double>(nTiles * tileN);
    if (!ShapedType::isDynamic(p.staticM)) {
      int64_t tiles = (p.staticM + 127) / 128 * nTiles;
      work = static_cast<double>((tiles + numSMs - 1) / numSMs * tileN);
    }
    return work / rate;
  };
  return cost(192, 1.0) <= cost(128, 0.9) ? 192 : 128;
}

static int64_t pickTileN(int64_t n, int64_t storeBoxColumns) {
  int64_t best = 0;
  int64_t bestPadded = INT64_MAX;
  for (int64_t candidate : kTileNCandidates) {
    if (storeBoxColumns && candidate % storeBoxColumns != 0)
      continue;
    int64_t padded = contract::ceilDiv(n, candidate) * candidate;
    if (padded < bestPadded) {
      best = candidate;
      bestPadded = padded;
    }
  }
  return best;
}

/// A stream-K CTA's workspace slot: its flag, in 128 bytes of its own,
/// then its tile of f32 partial sums (emitStreamKFixup).
static constexpr int64_t kStreamKFlagBytes = 128;

static void setStreamK(GemmTiling &t, bool streamK) {
  t.streamK = streamK;
  t.workspaceBytesPerCta =
      streamK ? kStreamKFlagBytes + 4 * t.tileM * t.tileN : 0;
}

/// f32 outputs (wgrad) and accumulate-into-C keep the direct stores: their
/// staging buffer would halve the pipeline depth.
static bool canStageOutput(const GemmProblem &p) {
  return getByteWidth(p.outElementType) == 2 && !p.accumulateIntoC;
}

/// Stages of `t` that fit in `maxSharedMemory` bytes (at most kMaxStages).
static int64_t getStagesThatFit(const GemmTiling &t, int64_t maxSharedMemory) {
  int64_t available = maxSharedMemory - getEpilogueBytes(t) -
                      PipelineRing::barrierBytes(kMaxStages) -
                      (t.streamK ? kStreamKScheduleBytes : 0);
  return std::min<int64_t>(kMaxStages,
                           available / (getStageBytes(t) + t.stageScaleBytes));
}

/// A staging buffer of two store boxes, used in turn (emitTmaStoreEpilogue),
/// instead of the whole tile; the tile's boxes must alternate evenly. Not
/// with an activation: the tile's output values, computed before the first
/// box is written, stay live across the boxes' barriers, and the GELU of a
/// 128x256 tile spilled 296 bytes.
static constexpr int64_t kStagingBoxPair = 2;

static bool canStageInBoxPair(const GemmProblem &p, const GemmTiling &t) {
  return t.tmaStoreEpilogue && !p.activation &&
         t.numStoreBoxes() > kStagingBoxPair &&
         t.numStoreBoxes() % kStagingBoxPair == 0;
}

static GemmTiling withStagingBoxPair(GemmTiling t) {
  t.stagingBoxes = kStagingBoxPair;
  return t;
}

/// The heuristic's tiling for tile `tileM` x `tileN`: TMA-store epilogue
/// where it fits, as many stages as shared memory holds (at most
/// kMaxStages), staging the output in two boxes where that makes room for
/// another stage (the 128x256 tile: 4 stages instead of 3).
static GemmTiling getDefaultTiling(const GemmProblem &p, int64_t tileM,
                                   int64_t tileN, int64_t maxSharedMemory) {
  GemmTiling t;
  t.tileM = tileM;
  t.tileN = tileN;
  t.outputBytes = getByteWidth(p.outElementType);
  t.tmaStoreEpilogue = canStageOutput(p) && tileN % t.storeBoxColumns() == 0;
  setScaleSlots(p, t);
  t.stages = getStagesThatFit(t, maxSharedMemory);
  if (canStageInBoxPair(p, t)) {
    GemmTiling paired = withStagingBoxPair(t);
    paired.stages = getStagesThatFit(paired, maxSharedMemory);
    if (paired.stages > t.stages)
      t = paired;
  }
  return t;
}

/// Why the sm_90a kernel cannot take tiling `t` for `p` on `target`, or ""
/// if it can.
static std::string getTilingError(const GemmProblem &p, const GemmTiling &t,
                                  const TargetInfo &target) {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (t.tileM != 64 && t.tileM != 128)
    os << "the sm_90a kernels take tile M 64 or 128 (one or two consumer "
          "warpgroups), got "
       << t.tileM;
  else if (p.isBlockwise() && !p.hasBlockwiseColumnScales() &&
           t.tileN > kScaleBlock + std::gcd(t.tileN, kScaleBlock))
    os << "the sm_90a blockwise kernels take the 128x128 B scales of at most "
          "two B blocks per tile: expected tile N <= 128 + gcd(tile N, 128), "
          "got "
       << t.tileN;
  else if (p.promoteInterval != 0 && t.tileN > kMaxPromotedTileN)
    os << "promoted accumulation keeps two f32 accumulators of tile N / 2 "
          "registers per thread: expected tile N <= "
       << kMaxPromotedTileN << ", got " << t.tileN;
  else if (t.clusterN != 1 || (t.clusterM != 1 && t.clusterM != 2))
    os << "the sm_90a kernels take clusters of 1x1 or 2x1 (two M tiles "
          "sharing a multicast B tile), got "
       << t.clusterM << "x" << t.clusterN;
  else if (t.clusterM == 2 && (t.tileN / 2) % 8 != 0)
    os << "a 2x1 cluster splits the B tile in halves of whole 8-row core "
          "matrices: expected tile N a multiple of 16, got "
       << t.tileN;
  else if (t.stages < 1)
    os << "not one pipeline stage of a " << t.tileM << "x" << t.tileN
       << " tile fits in the " << target.maxSharedMemoryPerBlock
       << " bytes of shared memory of the target (max_shared_memory_per_block "
          "of #fp8.target): raise it or configure a smaller tile";
  else if (int64_t smem = getDynamicSharedMemoryBytes(t);
           smem > target.maxSharedMemoryPerBlock)
    os << "the kernel configuration needs " << smem
       << " bytes of shared memory, more than the "
       << target.maxSharedMemoryPerBlock << " " << target.chip.name
       << " offers: use fewer stages or a smaller tile";
  return message;
}

FailureOr<GemmTiling> hopper::selectGemmTiling(ScaledMatmulOp op,
                                               const GemmProblem &p,
                                               GemmConfigAttr config,
                                               const TargetInfo &target) {
  int64_t maxSharedMemory = target.maxSharedMemoryPerBlock;
  GemmTiling t;
  if (config) {
    t = getGemmTiling(config, getByteWidth(p.outElementType),
                      canStageOutput(p));
    // Stream-K only where the IR asks for it: it is not faster yet. On an
    // H100 (M >= 4096, in one process against the whole-tile kernels), a
    // first version measured 1.6-2.3% faster tensorwise but 0.3-1.6% slower
    // blockwise (instruction-identical hot loops ran 3-5% slower beside the
    // stream-K code even where no tile is split, 8192^3), and the 128x192
    // rowwise and 128x256 fast kernels spilled 12-60 bytes; keeping the
    // schedule in shared memory (this version) removed the spills but
    // measured 3% slower tensorwise (bench/NOTES.md v15).
    setStreamK(t, config.getStreamK() && config.getStreamK().getValue());
    setScaleSlots(p, t);
    // Stage the output in two boxes where that makes the configured stages
    // fit (and they do not beside the whole tile).
    if (canStageInBoxPair(p, t) &&
        getDynamicSharedMemoryBytes(t) > maxSharedMemory &&
        getDynamicSharedMemoryBytes(withStagingBoxPair(t)) <= maxSharedMemory)
      t = withStagingBoxPair(t);
  } else if (p.promoteInterval != 0) {
    t = getDefaultTiling(p, 128,
                         pickPromotedTileN(p, target.numMultiprocessors),
                         maxSharedMemory);
  } else {
    // A TMA-store epilogue stores boxes of 128 bytes of output columns.
    int64_t storeBoxColumns =
        kSwizzle128BRowBytes / getByteWidth(p.outElementType);
    t = getDefaultTiling(
        p, 128, pickTileN(p.n, canStageOutput(p) ? storeBoxColumns : 0),
        maxSharedMemory);
  }
  std::string error = getTilingError(p, t, target);
  if (!error.empty())
    return op.emitOpError() << error;
  // A static M picks among the tiles of the launch variants now, by the
  // runtime's cost model on the target's SMs.
  if (!config && !ShapedType::isDynamic(p.staticM)) {
    auto cost = [&](const GemmTiling &c) {
      int64_t tiles = llvm::divideCeil(p.staticM, c.tileM) *
                      llvm::divideCeil(p.n, c.tileN);
      return static_cast<double>(
                 llvm::divideCeil(tiles, target.numMultiprocessors) *
                                 c.tileM * c.tileN) /
             static_cast<double>(getTileThroughput(p, c));
    };
    GemmTiling best = t;
    for (auto [tileM, tileN] : getLaunchVariantTiles(p, t)) {
      GemmTiling candidate = getDefaultTiling(p, tileM, tileN, maxSharedMemory);
      if (getTilingError(p, candidate, target).empty() &&
          cost(candidate) < cost(best))
        best = candidate;
    }
    t = best;
  }
  return t;
}

int64_t hopper::getTileThroughput(const GemmProblem &p, const GemmTiling &t) {
  bool promote = p.promoteInterval != 0;
  if (!promote && std::make_pair(t.tileM, t.tileN) == kFastTile)
    return kFastTileThroughput;
  if (t.tileM == 64 && t.tileN < 128)
    return promote ? 45 : 57;
  // The fast 64x128 tile: 75 on an H100 against the 4-stage 128x256 tile
  // (session 7: 2048x4096x7168 and 2048x14336x4096, equal work per wave;
  // session 4's H200 value, 90, picked it at M = 512 and 1024 where the
  // wide tiles ran 1.07-1.09x faster).
  if (t.tileM == 64)
    return promote ? 65 : 75;
  if (t.tileN < 192)
    return promote ? 85 : 92;
  return 100;
}

SmallVector<GemmTiling>
hopper::selectLaunchVariants(const GemmProblem &p, const GemmTiling &primary,
                             GemmConfigAttr config, const TargetInfo &target) {
  SmallVector<GemmTiling> variants;
  if (config || !ShapedType::isDynamic(p.staticM))
    return variants;
  for (auto [tileM, tileN] : getLaunchVariantTiles(p, primary)) {
    if (primary.tileM == tileM && primary.tileN == tileN)
      continue;
    GemmTiling t =
        getDefaultTiling(p, tileM, tileN, target.maxSharedMemoryPerBlock);
    if (getTilingError(p, t, target).empty())
      variants.push_back(t);
  }
  return variants;
}

/// Arrivals that fill a stage (its full barrier's count): the TMA thread's
/// (with the transaction bytes), and its cp.async copies' of 128x128 B
/// scales (emitScaleCopies).
static int64_t getProducerArrivals(const GemmProblem &p, const GemmTiling &t) {
  return t.stageScaleBytes && !p.hasBlockwiseColumnScales() ? 2 : 1;
}

/// Arrivals that free a stage (its empty barrier's count): one per consumer
/// warp of the cluster's CTAs, or one per consumer thread when the stage has
/// a scale slot (each thread's arrival releases its own reads of it).
static int64_t getConsumerArrivals(const GemmTiling &t) {
  int64_t perWarpgroup =
      t.stageScaleBytes ? kWarpgroupThreads : kWarpgroupThreads / kWarpThreads;
  return getNumConsumers(t) * perWarpgroup * t.clusterM;
}

namespace {
/// The stream-K schedule: the K blocks of the tiles from DpUnits on,
/// numbered tile by tile (Blocks of them), are split evenly over Ctas
/// CTAs; this CTA's are [Begin, End) (empty when it takes none).
enum class StreamKField {
  DpUnits,
  Begin,
  End,
  Ctas,
  Blocks,
  /// This CTA's pipeline iteration at block Begin: kBlocks per whole unit.
  FirstIteration,
  Count
};

/// The values the producer and consumer code share.
struct KernelValues : GemmKernelParams {
  Value tid;
  Value smem;
  /// The output staging buffer (TMA-store epilogue).
  Value epilogueBuffer;
  /// Work is scheduled in units of `clusterM` vertically adjacent tiles
  /// (one per CTA of the cluster, sharing the B tile).
  Value numMUnits;
  Value numUnits;
  Value clusterRank;  ///< 0 without a cluster
  Value firstUnit;    ///< this CTA's cluster index
  Value unitStride;   ///< number of clusters
  /// Stream-K kernels: the schedule (emitStreamKSchedule) in shared
  /// memory, read where it is used, so that none of it holds a register
  /// across the mainloop (held in registers, it made ptxas spill).
  Value streamKSchedule;
  PipelineRing ring;
  /// The stages' scale slots (blockwise), `stageScaleBytes` apart.
  Value scaleSlots;

  Value scaleSlot(KernelBuilder &kb, const GemmTiling &t, Value stage) const {
    return kb.bytePtr(scaleSlots, kb.mul(stage, kb.i32(t.stageScaleBytes)));
  }
  Value scheduleField(KernelBuilder &kb, StreamKField field) const {
    return kb.load(kb.builder().getI32Type(),
                   kb.bytePtr(streamKSchedule, 4 * static_cast<int64_t>(field)));
  }
  /// Units computed whole: from firstUnit on, unitStride apart, below this
  /// (all of them without stream-K).
  Value dpUnits(KernelBuilder &kb) const {
    return streamKSchedule ? scheduleField(kb, StreamKField::DpUnits)
                           : numUnits;
  }
  /// The first stream-K K block of CTA `cta` (< StreamKField::Ctas).
  Value streamKStart(KernelBuilder &kb, Value cta) const {
    return kb.divu(kb.mul(cta, scheduleField(kb, StreamKField::Blocks)),
                   scheduleField(kb, StreamKField::Ctas));
  }
};

/// A run of K blocks of one tile that a CTA computes.
struct WorkSegment {
  Value unit;
  Value kBegin, kEnd;
  /// A stream-K segment (of a tile that other CTAs may share).
  bool streamK = false;
};

/// Where a stream-K segment ends, found from the pipeline iteration after
/// it (StreamKField::FirstIteration: this CTA's first stream-K block is its
/// iteration FirstIteration), so that nothing of the segment stays live
/// across its mainloop but the loop bound.
struct StreamKTile {
  Value unit;
  /// The stream-K block after the tile's last K block.
  Value tileEndBlock;
  /// The segment is not the tile's first (its CTA started inside the
  /// tile): only a CTA's first segment can be.
  Value isLater;
};

/// The tile of `unit` that this CTA computes.
static TileCoordinate emitTileOfUnit(KernelBuilder &kb, const GemmProblem &p,
                                     const GemmTiling &t, const KernelValues &v,
                                     Value unit) {
  TileCoordinate coord = emitGroupedTileCoordinate(
      kb, unit, v.numMUnits, t.numNTiles(p.n), t.rasterGroup);
  if (t.clusterM > 1)
    coord.mTile = kb.add(kb.mul(coord.mTile, kb.i32(t.clusterM)), v.clusterRank);
  return coord;
}

/// The segment of the stream-K blocks that starts at block `block`: the
/// rest of its tile, or of this CTA's blocks if they end first.
/// The stream-K block of this CTA's pipeline iteration `iteration`.
static Value getStreamKBlock(KernelBuilder &kb, const KernelValues &v,
                             Value iteration) {
  return kb.add(v.scheduleField(kb, StreamKField::Begin),
                kb.sub(iteration,
                       v.scheduleField(kb, StreamKField::FirstIteration)));
}

/// The stream-K segment at pipeline iteration `iteration`.
static WorkSegment getStreamKSegment(KernelBuilder &kb, const GemmProblem &p,
                                     const GemmTiling &t,
                                     const KernelValues &v, Value iteration) {
  Value kBlocks = kb.i32(p.numKBlocks(t.tileK));
  Value block = getStreamKBlock(kb, v, iteration);
  Value tile = kb.divu(block, kBlocks);
  Value tileFirstBlock = kb.mul(tile, kBlocks);
  WorkSegment segment;
  segment.streamK = true;
  segment.unit = kb.add(v.dpUnits(kb), tile);
  segment.kBegin = kb.sub(block, tileFirstBlock);
  segment.kEnd = kb.minu(
      kb.sub(v.scheduleField(kb, StreamKField::End), tileFirstBlock), kBlocks);
  return segment;
}

/// The tile of the stream-K segment that ended at `iterationAfter`.
static StreamKTile getStreamKTileAfter(KernelBuilder &kb, const GemmProblem &p,
                                       const GemmTiling &t,
                                       const KernelValues &v,
                                       Value iterationAfter) {
  Value kBlocks = kb.i32(p.numKBlocks(t.tileK));
  Value last = kb.sub(getStreamKBlock(kb, v, iterationAfter), kb.i32(1));
  Value tile = kb.divu(last, kBlocks);
  Value tileFirstBlock = kb.mul(tile, kBlocks);
  StreamKTile result;
  result.unit = kb.add(v.dpUnits(kb), tile);
  result.tileEndBlock = kb.add(tileFirstBlock, kBlocks);
  result.isLater =
      arith::CmpIOp::create(kb.builder(), arith::CmpIPredicate::ugt,
                            v.scheduleField(kb, StreamKField::Begin),
                            tileFirstBlock);
  return result;
}

/// Calls `body` for the work of this CTA in order: the whole units, then
/// its stream-K segments (each the rest of a tile, or of this CTA's blocks
/// if they end first). `body` gets the segment and the carried values, and
/// returns the next ones. (Stream-K segments first measured slower: their
/// waits for partial sums are not hidden behind other CTAs' whole tiles.)
static ValueRange forEachWorkSegment(
    KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
    const KernelValues &v, ValueRange init,
    function_ref<SmallVector<Value>(const WorkSegment &, ValueRange)> body) {
  ValueRange state = kb.forLoop(
      v.firstUnit, v.dpUnits(kb), v.unitStride, init,
      [&](Value unit, ValueRange carried) {
        WorkSegment whole{unit, kb.i32(0), kb.i32(p.numKBlocks(t.tileK))};
        return body(whole, carried);
      });
  if (!t.streamK)
    return state;
  // The pipeline iteration (carried[0]) tells the stream-K block.
  return kb.whileLoop(
      state,
      [&](ValueRange carried) {
        return kb.ult(getStreamKBlock(kb, v, carried[0]),
                      v.scheduleField(kb, StreamKField::End));
      },
      [&](ValueRange carried) {
        return body(getStreamKSegment(kb, p, t, v, carried[0]), carried);
      });
}
} // namespace

/// The partial sums of a stream-K tile cost about this many K blocks of
/// MMA time per CTA that adds them (a 128x192 f32 tile written by one CTA,
/// read by another, through L2).
static constexpr int64_t kStreamKFixupBlocks = 2;

/// The stream-K schedule (KernelValues::dpUnits and streamK*). When the
/// units do not fill the last wave (W = units mod CTAs > 0), the W tiles'
/// K blocks (W * kBlocks) can be split evenly over `ctas` CTAs of b blocks
/// each, ctas = min(CTAs, W * kBlocks / bMin): the last wave then takes
/// about b + F * ceil(kBlocks / b) blocks of time (F = kStreamKFixupBlocks
/// per partial sum its first CTA adds) instead of kBlocks. bMin =
/// max(4, sqrt(F * kBlocks)) minimizes that where the CTAs suffice. The
/// split is taken when it saves at least a fifth of the last wave;
/// otherwise the last wave runs whole tiles.
static void emitStreamKSchedule(KernelBuilder &kb, const GemmProblem &p,
                                const GemmTiling &t, const KernelValues &v) {
  ImplicitLocOpBuilder &b = kb.builder();
  int64_t kBlocks = p.numKBlocks(t.tileK);
  int64_t minBlocksPerCta = std::max<int64_t>(
      4, static_cast<int64_t>(std::ceil(
             std::sqrt(static_cast<double>(kStreamKFixupBlocks * kBlocks)))));
  Value tail = kb.remu(v.numUnits, v.unitStride);
  Value blocks = kb.mul(tail, kb.i32(kBlocks));
  Value ctas = kb.minu(v.unitStride, kb.divu(blocks, kb.i32(minBlocksPerCta)));
  auto select = [&](Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, cond, x, y).getResult();
  };
  auto ne0 = [&](Value x) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ne, x, kb.i32(0))
        .getResult();
  };
  Value hasCtas = ne0(ctas);
  Value perCta = kb.ceilDiv(blocks, select(hasCtas, ctas, kb.i32(1)));
  Value lastWave = kb.add(
      perCta, kb.mul(kb.i32(kStreamKFixupBlocks),
                     kb.ceilDiv(kb.i32(kBlocks),
                                     select(ne0(perCta), perCta, kb.i32(1)))));
  Value split = kb.andi(
      hasCtas, arith::CmpIOp::create(b, arith::CmpIPredicate::ule,
                                     kb.mul(lastWave, kb.i32(5)),
                                     kb.i32(4 * kBlocks)));
  Value splitCtas = select(split, ctas, kb.i32(1));
  auto start = [&](Value cta) {
    return kb.divu(kb.mul(cta, blocks), splitCtas);
  };
  Value takesPart = kb.andi(split, kb.ult(v.firstUnit, ctas));
  auto store = [&](StreamKField field, Value value) {
    kb.store(value, kb.bytePtr(v.streamKSchedule,
                               4 * static_cast<int64_t>(field)));
  };
  store(StreamKField::DpUnits,
        select(split, kb.sub(v.numUnits, tail), v.numUnits));
  store(StreamKField::Begin, select(takesPart, start(v.firstUnit), kb.i32(0)));
  store(StreamKField::End,
        select(takesPart, start(kb.add(v.firstUnit, kb.i32(1))), kb.i32(0)));
  store(StreamKField::Ctas, splitCtas);
  store(StreamKField::Blocks, blocks);
  Value dpUnits = select(split, kb.sub(v.numUnits, tail), v.numUnits);
  Value wholeUnits = select(
      kb.ult(v.firstUnit, dpUnits),
      kb.ceilDiv(kb.sub(dpUnits, v.firstUnit), v.unitStride), kb.i32(0));
  store(StreamKField::FirstIteration,
        kb.mul(wholeUnits, kb.i32(p.numKBlocks(t.tileK))));
}

/// Walks the producer side of the pipeline: for every K block of every work
/// segment of this CTA (forEachWorkSegment), waits until the block's stage
/// is free and calls `body` with the tile, the K block and the stage.
static void forEachFreeStage(
    KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
    const KernelValues &v,
    function_ref<void(const TileCoordinate &, Value kBlock, Value stage)>
        body) {
  forEachWorkSegment(
      kb, p, t, v, {kb.i32(0)},
      [&](const WorkSegment &segment, ValueRange state) {
        TileCoordinate coord = emitTileOfUnit(kb, p, t, v, segment.unit);
        ValueRange next = kb.forLoop(
            segment.kBegin, segment.kEnd, kb.i32(1), {state[0]},
            [&](Value kBlock, ValueRange inner) {
              Value iteration = inner[0];
              Value stage = v.ring.stage(kb, iteration);
              kb.mbarrierWait(v.ring.emptyBarrier(kb, stage),
                              v.ring.producerParity(kb, iteration));
              body(coord, kBlock, stage);
              return SmallVector<Value>{kb.add(iteration, kb.i32(1))};
            });
        return SmallVector<Value>{next[0]};
      });
}

/// Blockwise scales travel with their stage, copied into the stage's scale
/// slot by the TMA thread. The tile's 1x128 scales of a K block (A's rows,
/// and B's columns for 1x128 B tiles) are contiguous in their MN-major
/// layouts, so each is one bulk copy (cp.async.bulk) counted in the
/// stage's transaction bytes: 16-byte aligned (the runtime checks the
/// tensors' alignment; rows are whole multiples of 4 floats) and stopping
/// at the end of the tensor's rows (roundup(M, 4) for A, N for B), so that
/// the slot keeps stale values only where rows past M and columns past N
/// read it (their results are never stored). 128x128 B scales, one per
/// column class (BScaleClasses), are 4-byte cp.async copies that count as
/// one more arrival on the full barrier once they land. (A warp of 4-byte
/// cp.async copies, one arrival per lane, measured 9% slower: bench/NOTES.md
/// v14.)
namespace {
/// The bulk copies' sizes, needed for the stage's transaction bytes before
/// the copies are issued.
struct ScaleCopySizes {
  Value aRows;  ///< roundup(M, 4): A's scale rows per K block
  Value aBytes; ///< the A copy's
  Value bBytes; ///< the B copy's (1x128 B tiles only)
  Value total;  ///< their sum
};
} // namespace

static ScaleCopySizes getScaleCopySizes(KernelBuilder &kb,
                                        const GemmProblem &p,
                                        const GemmTiling &t,
                                        const KernelValues &v, Value mOffset,
                                        Value nOffset) {
  ScaleCopySizes sizes;
  // A: 1x128 tiles, MN-major [ceil(K/128), roundup(M, 4)]
  // (kMNMajorScaleAlignment: the layout the quantize kernels write).
  sizes.aRows = kb.mul(kb.ceilDiv(v.m, kMNMajorScaleAlignment),
                       kb.i32(kMNMajorScaleAlignment));
  sizes.aBytes = kb.mul(kb.minu(kb.i32(t.tileM), kb.sub(sizes.aRows, mOffset)),
                        kb.i32(4));
  sizes.total = sizes.aBytes;
  if (p.hasBlockwiseColumnScales()) {
    // B: 1x128 tiles, MN-major [ceil(K/128), N] (N % 16 == 0).
    sizes.bBytes = kb.mul(
        kb.minu(kb.i32(t.tileN), kb.sub(kb.i32(p.n), nOffset)), kb.i32(4));
    sizes.total = kb.add(sizes.total, sizes.bBytes);
  }
  return sizes;
}

static void emitScaleCopies(KernelBuilder &kb, const GemmProblem &p,
                            const GemmTiling &t, const KernelValues &v,
                            const ScaleCopySizes &sizes, Value kBlock,
                            Value slot, Value mOffset, Value nOffset,
                            Value full) {
  ImplicitLocOpBuilder &b = kb.builder();
  // The `.shared::cluster` form (the `.shared::cta` one needs PTX 8.6); a
  // CTA's own shared address is a valid shared::cluster one.
  auto bulkCopy = [&](Value dst, Value src, Value bytes) {
    NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
        b,
        LLVM::AddrSpaceCastOp::create(
            b, kb.ptrType(AddressSpace::SharedCluster), dst),
        src, full, bytes, /*multicastMask=*/Value(), /*l2CacheHint=*/Value());
  };
  bulkCopy(slot,
           kb.globalElementPtr(
               v.aScaleInv, kb.add(kb.mul(kBlock, sizes.aRows), mOffset), 4),
           sizes.aBytes);
  if (sizes.bBytes) {
    bulkCopy(kb.bytePtr(slot, 4 * t.tileM),
             kb.globalElementPtr(
                 v.bScaleInv, kb.add(kb.mul(kBlock, kb.i32(p.n)), nOffset), 4),
             sizes.bBytes);
    return;
  }
  // B: 128x128 tiles [ceil(N/128), ceil(K/128)]: the scale of each column
  // class, clamped to the last block.
  Value firstBlock = kb.divu(nOffset, kb.i32(kScaleBlock));
  Value offsetInBlock = kb.remu(nOffset, kb.i32(kScaleBlock));
  for (auto [c, bound] : llvm::enumerate(BScaleClasses(t).bounds)) {
    Value block = firstBlock;
    if (bound == kScaleBlock)
      block = kb.add(block, kb.i32(1));
    else if (bound != 0)
      block = arith::SelectOp::create(b, kb.ult(offsetInBlock, kb.i32(bound)),
                                      block, kb.add(block, kb.i32(1)));
    block = kb.minu(block, kb.i32((p.n - 1) / kScaleBlock));
    kb.cpAsync(kb.bytePtr(slot, 4 * (t.tileM + static_cast<int64_t>(c))),
               kb.globalElementPtr(
                   v.bScaleInv,
                   kb.add(kb.mul(block, kb.i32(p.numKBlocks(t.tileK))), kBlock),
                   4),
               4);
  }
  kb.cpAsyncArriveOn(full);
}

/// One thread issues every TMA load, and every copy of blockwise scales.
static void emitTmaProducer(KernelBuilder &kb, const GemmProblem &p,
                            const GemmTiling &t, const KernelValues &v) {
  // With a cluster, each CTA loads 1/clusterM of the B tile and multicasts
  // it to the whole cluster.
  int64_t bRows = t.tileN / t.clusterM;
  Value multicastMask;
  Value bRowOffset = kb.i32(0);
  if (t.clusterM > 1) {
    multicastMask = arith::ConstantIntOp::create(kb.builder(),
                                                 (1 << t.clusterM) - 1, 16);
    bRowOffset = kb.mul(v.clusterRank, kb.i32(bRows));
  }
  forEachFreeStage(kb, p, t, v, [&](const TileCoordinate &coord, Value kBlock,
                                    Value stage) {
    Value mOffset = kb.mul(coord.mTile, kb.i32(t.tileM));
    Value nOffset = kb.add(kb.mul(coord.nTile, kb.i32(t.tileN)), bRowOffset);
    Value full = v.ring.fullBarrier(kb, stage);
    // The scales' tile offset (B's without the cluster rank's share).
    Value scaleNOffset = kb.mul(coord.nTile, kb.i32(t.tileN));
    ScaleCopySizes scales;
    if (t.stageScaleBytes)
      scales = getScaleCopySizes(kb, p, t, v, mOffset, scaleNOffset);
    // Out-of-bounds box elements are zero-filled and counted: every stage
    // receives the full box bytes (and the scale copies theirs).
    Value txBytes = kb.i32(getStageBytes(t));
    kb.mbarrierArriveExpectTx(
        full, scales.total ? kb.add(txBytes, scales.total) : txBytes);
    Value aTile = kb.bytePtr(v.smem, kb.mul(stage, kb.i32(getStageBytes(t))));
    Value bTile = kb.bytePtr(aTile, kb.add(kb.i32(t.tileM * t.tileK),
                                           kb.mul(bRowOffset, kb.i32(t.tileK))));
    Value kOffset = kb.mul(kBlock, kb.i32(t.tileK));
    kb.tmaLoad2d(aTile, v.tmaA, kOffset, mOffset, full);
    kb.tmaLoad2d(bTile, v.tmaB, kOffset, nOffset, full, multicastMask);
    if (t.stageScaleBytes)
      emitScaleCopies(kb, p, t, v, scales, kBlock, v.scaleSlot(kb, t, stage),
                      mOffset, scaleNOffset, full);
  });
}

static void emitProducer(KernelBuilder &kb, const GemmProblem &p,
                         const GemmTiling &t, const KernelValues &v) {
  NVVM::SetMaxRegisterOp::create(kb.builder(), kProducerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  kb.ifThen(kb.eq(v.tid, kb.i32(0)), [&] { emitTmaProducer(kb, p, t, v); });
}

/// The B scales of this K block for a thread's fragment columns (1x128 B
/// tiles), from the stage's scale slot: element 2j + e is the scale of tile
/// column 8j + colInFragment + e (the columns of accumulator elements
/// 4j + e and 4j + 2 + e); each even-aligned pair is one 8-byte load.
static SmallVector<Value> emitColumnScaleLoads(KernelBuilder &kb,
                                               const GemmTiling &t,
                                               Value columnScales,
                                               Value colInFragment) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  SmallVector<Value> scales;
  for (int64_t j = 0; j < t.tileN / 8; ++j) {
    Value col = kb.add(kb.i32(8 * j), colInFragment);
    Value pair =
        kb.load(f32x2, kb.bytePtr(columnScales, kb.mul(col, kb.i32(4))));
    for (int e = 0; e < 2; ++e)
      scales.push_back(LLVM::ExtractElementOp::create(b, pair, kb.i32(e)));
  }
  return scales;
}

/// Converts the f32 pair to the output type and stores it at `ptr`.
static void storePair(KernelBuilder &kb, Value v0, Value v1, Type outType,
                      Value ptr) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  Value vec = LLVM::UndefOp::create(b, f32x2);
  vec = LLVM::InsertElementOp::create(b, vec, v0, kb.i32(0));
  vec = LLVM::InsertElementOp::create(b, vec, v1, kb.i32(1));
  if (outType.isF32()) {
    kb.store(vec, ptr);
    return;
  }
  Value narrow =
      arith::TruncFOp::create(b, VectorType::get({2}, outType), vec);
  kb.store(LLVM::BitcastOp::create(b, b.getI32Type(), narrow), ptr);
}

/// The scaled (+ bias) output values of a thread's fragment, in fragment
/// order, ready to be stored.
static SmallVector<Value> emitEpilogueValues(KernelBuilder &kb,
                                             const GemmProblem &p,
                                             const GemmTiling &t,
                                             const KernelValues &v,
                                             Value result, Value rows[2],
                                             Value nOffset, Value colInFragment,
                                             Value tensorScale) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value mLast = kb.sub(v.m, kb.i32(1));
  bool guardColumns = p.n % t.tileN != 0;
  Value rowScale[2];
  if (p.aScale == ScaleMode::Row)
    for (int h = 0; h < 2; ++h)
      rowScale[h] = kb.loadF32(v.aScaleInv, kb.minu(rows[h], mLast));
  SmallVector<Value> values(t.tileN / 2);
  for (int64_t j = 0; j < t.tileN / 8; ++j) {
    Value col = kb.add(nOffset, kb.add(kb.i32(8 * j), colInFragment));
    // Columns past N (a partial last tile) read clamped, store nothing.
    Value colRead = guardColumns ? kb.minu(col, kb.i32(p.n - 2)) : col;
    Value colScale[2], biasValue[2];
    for (int e = 0; e < 2; ++e) {
      Value c = e ? kb.add(colRead, kb.i32(1)) : colRead;
      if (p.bScale == ScaleMode::Row)
        colScale[e] = kb.loadF32(v.bScaleInv, c);
      if (p.biasElementType) {
        Value x = kb.load(p.biasElementType,
                          kb.globalElementPtr(v.bias, c,
                                           getByteWidth(p.biasElementType)));
        biasValue[e] = p.biasElementType.isF32()
                           ? x
                           : arith::ExtFOp::create(b, b.getF32Type(), x);
      }
    }
    for (int h = 0; h < 2; ++h) {
      for (int e = 0; e < 2; ++e) {
        int64_t i = 4 * j + 2 * h + e;
        Value x = LLVM::ExtractValueOp::create(b, result, i);
        if (tensorScale)
          x = arith::MulFOp::create(b, x, tensorScale);
        if (rowScale[h])
          x = arith::MulFOp::create(b, x, rowScale[h]);
        if (colScale[e])
          x = arith::MulFOp::create(b, x, colScale[e]);
        if (biasValue[e])
          x = arith::AddFOp::create(b, x, biasValue[e]);
        if (p.activation)
          x = emitActivation(kb, *p.activation, x);
        values[i] = x;
      }
    }
  }
  return values;
}

/// Each thread stores its (row, column pair) fragments to global memory,
/// guarded against the M and N edges, adding C first when accumulating.
static void emitDirectStores(KernelBuilder &kb, const GemmProblem &p,
                             const GemmTiling &t, const KernelValues &v,
                             ArrayRef<Value> values, Value rows[2],
                             Value nOffset, Value colInFragment) {
  ImplicitLocOpBuilder &b = kb.builder();
  bool guardColumns = p.n % t.tileN != 0;
  Value n = kb.i32(p.n);
  Value rowInBounds[2] = {kb.ult(rows[0], v.m), kb.ult(rows[1], v.m)};
  int64_t outBytes = getByteWidth(p.outElementType);
  for (int64_t j = 0; j < t.tileN / 8; ++j) {
    Value col = kb.add(nOffset, kb.add(kb.i32(8 * j), colInFragment));
    for (int h = 0; h < 2; ++h) {
      Value pair[2] = {values[4 * j + 2 * h], values[4 * j + 2 * h + 1]};
      Value inBounds = rowInBounds[h];
      if (guardColumns)
        inBounds = kb.andi(inBounds, kb.ult(col, n));
      kb.ifThen(inBounds, [&] {
        Value row64 = arith::ExtUIOp::create(b, b.getI64Type(), rows[h]);
        Value col64 = arith::ExtUIOp::create(b, b.getI64Type(), col);
        Value index = arith::AddIOp::create(
            b, arith::MulIOp::create(b, row64, kb.i64(p.n)), col64);
        if (p.accumulateIntoC) {
          auto f32x2 = VectorType::get({2}, b.getF32Type());
          Value cPair = kb.load(f32x2, kb.globalElementPtr(v.c, index, 4));
          for (int e = 0; e < 2; ++e)
            pair[e] = arith::AddFOp::create(
                b, pair[e],
                LLVM::ExtractElementOp::create(b, cPair, kb.i32(e)));
        }
        storePair(kb, pair[0], pair[1], p.outElementType,
                  kb.globalElementPtr(v.d, index, outBytes));
      });
    }
  }
}

/// The consumers write the tile to the shared staging buffer in the layout
/// of the output tensor map's 128-byte swizzled boxes (box b holds columns
/// [64b, 64b + 64) of all tile rows; within a 128-byte row, 16-byte chunk c
/// lives at chunk c ^ (row % 8)), then one thread stores the boxes with TMA.
/// The swizzle makes the fragment writes bank-conflict free: the 8 rows a
/// warp writes per instruction land in 8 different chunks.
static void emitTmaStoreEpilogue(KernelBuilder &kb, const GemmProblem &p,
                                 const GemmTiling &t, const KernelValues &v,
                                 ArrayRef<Value> values, Value rowsInTile[2],
                                 Value lane, Value isStoreThread,
                                 Value mOffset, Value nOffset) {
  ImplicitLocOpBuilder &b = kb.builder();
  int64_t consumers = getNumConsumers(t) * kWarpgroupThreads;
  int64_t boxColumns = t.storeBoxColumns();
  int64_t boxBytes = t.tileM * kSwizzle128BRowBytes;
  int64_t slots = t.numStagingBoxes();
  // The boxes [first, first + count) go to consecutive staging slots from
  // slot first % slots on, and out with one commit group. A buffer of the
  // whole tile takes them at once, after the previous tile's stores have
  // read it; a buffer of fewer slots takes them one at a time in turn: the
  // tile's box count is a multiple of the slots, so box i always lands in
  // slot i % slots, whose last store (slots groups ago, possibly the
  // previous tile's) must have read it.
  auto stageBoxes = [&](int64_t first, int64_t count) {
    int64_t pending = slots == t.numStoreBoxes() ? 0 : slots - 1;
    int64_t slot0 = first % slots;
    kb.ifThen(isStoreThread,
              [&] { kb.bulkWaitGroup(pending, /*readOnly=*/true); });
    kb.namedBarrier(kConsumerBarrierId, consumers);
    Value swizzle = kb.divu(lane, kb.i32(4)); // == row % 8 for both rows
    Value inChunk = kb.mul(kb.remu(lane, kb.i32(4)), kb.i32(4));
    int64_t groupsPerBox = boxColumns / 8;
    for (int h = 0; h < 2; ++h) {
      Value rowBase = kb.add(
          kb.mul(rowsInTile[h], kb.i32(kSwizzle128BRowBytes)), inChunk);
      for (int64_t j = first * groupsPerBox; j < (first + count) * groupsPerBox;
           ++j) {
        int64_t slot = slot0 + j / groupsPerBox - first;
        int64_t chunk = j % (kSwizzle128BRowBytes / 16);
        Value offset = kb.add(
            rowBase,
            kb.add(kb.i32(slot * boxBytes),
                   kb.mul(arith::XOrIOp::create(b, kb.i32(chunk), swizzle),
                          kb.i32(16))));
        storePair(kb, values[4 * j + 2 * h], values[4 * j + 2 * h + 1],
                  p.outElementType, kb.bytePtr(v.epilogueBuffer, offset));
      }
    }
    kb.fenceProxyAsyncShared();
    kb.namedBarrier(kConsumerBarrierId, consumers);
    kb.ifThen(isStoreThread, [&] {
      for (int64_t box = first; box < first + count; ++box)
        kb.tmaStore2d(
            v.tmaD,
            kb.bytePtr(v.epilogueBuffer, (slot0 + box - first) * boxBytes),
            kb.add(nOffset, kb.i32(box * boxColumns)), mOffset);
      kb.bulkCommitGroup();
    });
  };
  if (slots == t.numStoreBoxes()) {
    stageBoxes(0, slots);
    return;
  }
  for (int64_t box = 0; box < t.numStoreBoxes(); ++box)
    stageBoxes(box, 1);
}

/// Stream-K: the partial sums of a tile's K blocks meet in the CTA that
/// computes its K block 0; CTAs take consecutive blocks, so the others are
/// the CTAs after it. A CTA with a later segment of the tile stores its
/// `sums` in its workspace slot and raises its flag; the first CTA waits
/// for each flag, clears it for the next launch, adds the sums in CTA order
/// (the result does not depend on timing) and runs `epilogue` on the total.
/// Only a CTA's first segment can be a later one, and it waits for nothing:
/// no CTA waits in a cycle (every CTA of the persistent grid is resident).
/// A slot holds the consumer threads' accumulator elements 4 at a time,
/// [element / 4][consumer thread], so that both sides' accesses coalesce.
static void emitStreamKFixup(KernelBuilder &kb, const GemmTiling &t,
                             const KernelValues &v, const StreamKTile &tile,
                             Value sums, Value isSignalThread,
                             function_ref<void(Value)> epilogue) {
  ImplicitLocOpBuilder &b = kb.builder();
  int64_t consumers = getNumConsumers(t) * kWarpgroupThreads;
  auto f32x4 = VectorType::get({4}, b.getF32Type());
  Value consumerThread = kb.sub(v.tid, kb.i32(kWarpgroupThreads));
  auto flag = [&](Value cta) {
    return kb.globalElementPtr(v.workspace, cta, t.workspaceBytesPerCta);
  };
  // Chunk `group` of this thread in `cta`'s slot, after the flag.
  auto chunkPtr = [&](Value cta, int64_t group) {
    Value chunk = kb.add(kb.i32(group * consumers), consumerThread);
    return kb.bytePtr(flag(cta),
                      kb.add(kb.mul(chunk, kb.i32(16)),
                             kb.i32(kStreamKFlagBytes)));
  };
  int64_t groups = t.tileN / 8;
  kb.ifThen(tile.isLater, [&] {
    for (int64_t g = 0; g < groups; ++g) {
      Value chunk = LLVM::UndefOp::create(b, f32x4);
      for (int64_t e = 0; e < 4; ++e)
        chunk = LLVM::InsertElementOp::create(
            b, chunk, LLVM::ExtractValueOp::create(b, sums, 4 * g + e),
            kb.i32(e));
      kb.store(chunk, chunkPtr(v.firstUnit, g));
    }
    kb.namedBarrier(kConsumerBarrierId, consumers);
    kb.ifThen(isSignalThread, [&] {
      kb.fenceAcqRelGpu();
      kb.storeRelaxedGpu(kb.i32(1), flag(v.firstUnit));
    });
  });
  Value isFirst = arith::XOrIOp::create(
      b, tile.isLater, arith::ConstantIntOp::create(b, 1, 1));
  kb.ifThen(isFirst, [&] {
    Value tileEnd = tile.tileEndBlock;
    ValueRange total = kb.whileLoop(
        {kb.add(v.firstUnit, kb.i32(1)), sums},
        [&](ValueRange carried) {
          return kb.ult(v.streamKStart(kb, carried[0]), tileEnd);
        },
        [&](ValueRange carried) {
          Value cta = carried[0];
          kb.ifThen(isSignalThread, [&] {
            kb.whileLoop(
                {},
                [&](ValueRange) {
                  return kb.eq(kb.loadAcquireGpu(flag(cta)), kb.i32(0));
                },
                [](ValueRange) { return SmallVector<Value>{}; });
            kb.storeRelaxedGpu(kb.i32(0), flag(cta));
          });
          kb.namedBarrier(kConsumerBarrierId, consumers);
          Value acc = carried[1];
          for (int64_t g = 0; g < groups; ++g) {
            Value chunk = kb.load(f32x4, chunkPtr(cta, g));
            for (int64_t e = 0; e < 4; ++e) {
              int64_t i = 4 * g + e;
              Value sum = arith::AddFOp::create(
                  b, LLVM::ExtractValueOp::create(b, acc, i),
                  LLVM::ExtractElementOp::create(b, chunk, kb.i32(e)));
              acc = LLVM::InsertValueOp::create(b, acc, sum, i);
            }
          }
          return SmallVector<Value>{kb.add(cta, kb.i32(1)), acc};
        });
    epilogue(total[1]);
  });
}

static void emitConsumer(KernelBuilder &kb, const GemmProblem &p,
                         const GemmTiling &t, const KernelValues &v) {
  ImplicitLocOpBuilder &b = kb.builder();
  NVVM::SetMaxRegisterOp::create(b,
                                 getNumConsumers(t) == 2
                                     ? kConsumerRegistersTwoWarpgroups
                                     : kConsumerRegistersOneWarpgroup,
                                 NVVM::SetMaxRegisterAction::increase);
  bool promote = p.promoteInterval != 0;
  Value consumer =
      kb.sub(kb.divu(v.tid, kb.i32(kWarpgroupThreads)), kb.i32(1));
  // The same read from lane 0, so that ptxas knows it is one value in
  // every lane: the wgmma descriptors built from it then live in uniform
  // registers, where wgmma takes them, instead of being moved there before
  // every MMA. (Only the descriptors use it: with every use of the
  // warpgroup index uniform, ptxas hoists the epilogue's addresses out of
  // the tile loop and spills them.)
  Value uniformConsumer =
      NVVM::ShflOp::create(b, b.getI32Type(), kb.i32(-1), consumer, kb.i32(0),
                           kb.i32(31), NVVM::ShflKind::idx,
                           /*return_value_and_is_valid=*/nullptr);
  Value threadInWarpgroup = kb.remu(v.tid, kb.i32(kWarpgroupThreads));
  Value warp = kb.divu(threadInWarpgroup, kb.i32(kWarpThreads));
  Value lane = kb.remu(v.tid, kb.i32(kWarpThreads));
  // wgmma accumulator fragment (PTX ISA 9.7.15.5.2, m64nNk32 D): element
  // 4j + 2h + e of a thread is row warp*16 + lane/4 + 8h, column
  // 8j + 2*(lane%4) + e of its warpgroup's 64 x N block.
  Value rowInTile = kb.add(
      kb.add(kb.mul(consumer, kb.i32(kWgmmaM)), kb.mul(warp, kb.i32(16))),
      kb.divu(lane, kb.i32(4)));
  Value colInFragment = kb.mul(kb.remu(lane, kb.i32(4)), kb.i32(2));
  Type accType = getAccumulatorType(b.getContext(), t.tileN);
  // The first consumer thread issues the epilogue's TMA stores.
  Value isStoreThread = kb.eq(v.tid, kb.i32(kWarpgroupThreads));

  Value tensorScale;
  if (p.aScale == ScaleMode::Tensor)
    tensorScale = kb.loadF32(v.aScaleInv, kb.i32(0));
  if (p.bScale == ScaleMode::Tensor) {
    Value s = kb.loadF32(v.bScaleInv, kb.i32(0));
    tensorScale = tensorScale ? arith::MulFOp::create(b, tensorScale, s) : s;
  }
  Value smemAddress = kb.sharedAddress(v.smem);
  // Descriptor low words of stage 0's A rows of this warpgroup and of its
  // B tile; a stage's are these plus the stage's offset
  // (emitKMajorSwizzle128BDescriptorLow).
  Value aDescriptorLow = emitKMajorSwizzle128BDescriptorLow(
      kb, kb.add(smemAddress, kb.mul(uniformConsumer,
                                     kb.i32(kWgmmaM * kSwizzle128BRowBytes))));
  Value bDescriptorLow = emitKMajorSwizzle128BDescriptorLow(
      kb, kb.add(smemAddress, kb.i32(t.tileM * kSwizzle128BRowBytes)));
  auto stageDescriptorLows = [&](Value stage) {
    Value offset =
        kb.mul(stage, kb.i32(getDescriptorLowOffset(getStageBytes(t))));
    return std::make_pair(kb.add(aDescriptorLow, offset),
                          kb.add(bDescriptorLow, offset));
  };
  BScaleClasses bClasses(t);
  int64_t numBScaleClasses = bClasses.bounds.size();

  // A stage is free once every consumer warp of the cluster is done with
  // it: one lane of each warp arrives on the stage's empty barrier in every
  // CTA of the cluster (wgmma.wait_group is warpgroup-wide, so the whole warp
  // has finished reading its tiles); with a scale slot, every thread
  // (getConsumerArrivals).
  auto releaseStage = [&](Value stage) {
    auto arrive = [&] {
      Value empty = v.ring.emptyBarrier(kb, stage);
      if (t.clusterM == 1) {
        kb.mbarrierArrive(empty);
        return;
      }
      for (int64_t rank = 0; rank < t.clusterM; ++rank)
        kb.mbarrierArrive(kb.mapToClusterRank(empty, kb.i32(rank)));
    };
    // Every thread reads the stage's scale slot itself, so every thread
    // arrives (a warp barrier and one lane's arrival order the reads as
    // well, by the PTX memory model, but compute-sanitizer's racecheck
    // reports them; measured no faster, bench/NOTES.md v14).
    if (t.stageScaleBytes)
      arrive();
    else
      kb.ifThen(kb.electOneLane(), arrive);
  };
  // The wgmmas of one K block into `acc` (the first one overwriting it when
  // `zeroFirst`), `n` columns of B from `bColumn` on, as one commit group.
  auto issueMmas = [&](Value acc, Value aLow, Value bLow, int64_t bColumn,
                       int64_t n, bool zeroFirst) {
    for (int64_t s = 0; s < t.tileK / kWgmmaK; ++s) {
      // One byte per FP8 element along K; B's rows are 128 bytes.
      int64_t aStep = getDescriptorLowOffset(s * kWgmmaK);
      int64_t bStep =
          getDescriptorLowOffset(bColumn * kSwizzle128BRowBytes + s * kWgmmaK);
      acc = emitWgmma(
          kb, acc,
          emitKMajorSwizzle128BDescriptor(
              kb, aStep ? kb.add(aLow, kb.i32(aStep)) : aLow),
          emitKMajorSwizzle128BDescriptor(
              kb, bStep ? kb.add(bLow, kb.i32(bStep)) : bLow),
          n, p.aElementType, p.bElementType,
          /*accumulate=*/!(zeroFirst && s == 0));
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b);
    return acc;
  };
  // The scale of element i of a thread's accumulator for the K block in
  // `stage` (blockwise; null for the other recipes), read from the stage's
  // scale slot: element 4j + 2h + e (row h, column 8j + e of the fragment)
  // is scaled by its row's A scale times its column's B scale. Read before
  // the block's MMAs are issued: shared-memory loads issued behind them
  // return only once the MMAs have read their operands.
  auto loadStageScales = [&](Value stage) -> std::function<Value(int64_t)> {
    if (!p.isBlockwise())
      return [](int64_t) { return Value(); };
    Value slot = v.scaleSlot(kb, t, stage);
    std::array<Value, 2> rowScale;
    for (int h = 0; h < 2; ++h)
      rowScale[h] = kb.load(
          b.getF32Type(),
          kb.bytePtr(slot, kb.mul(kb.add(rowInTile, kb.i32(8 * h)),
                                  kb.i32(4))));
    Value bScales = kb.bytePtr(slot, 4 * t.tileM);
    if (p.hasBlockwiseColumnScales()) {
      // 1x128 B: one scale per column.
      SmallVector<Value> columnScales =
          emitColumnScaleLoads(kb, t, bScales, colInFragment);
      return [&b, rowScale, columnScales](int64_t i) -> Value {
        int64_t j = i / 4, h = (i % 4) / 2, e = i % 2;
        return arith::MulFOp::create(b, rowScale[h], columnScales[2 * j + e]);
      };
    }
    // 128x128 B: one scale per column class; the products made once.
    SmallVector<Value> products;
    for (int64_t c = 0; c < numBScaleClasses; ++c) {
      Value classScale = kb.load(b.getF32Type(), kb.bytePtr(bScales, 4 * c));
      for (int h = 0; h < 2; ++h)
        products.push_back(arith::MulFOp::create(b, rowScale[h], classScale));
    }
    return [products, &bClasses](int64_t i) -> Value {
      return products[2 * bClasses.classOfGroup[i / 4] + (i % 4) / 2];
    };
  };

  // Promoted accumulation splits the tile's columns into parts, each with
  // a partial accumulator of its own and its own commit group: while the
  // first part of a K block is promoted (wait_group 1), the second part's
  // MMAs still run, so the tensor cores idle only for the last, narrower
  // part's promotion (getPromotionParts). Each block's groups are complete
  // by the end of its iteration: a partial accumulator still in flight
  // across the loop's back edge would make ptxas serialize every wgmma
  // (C7514).
  SmallVector<int64_t> partColumns = getPromotionParts(t.tileN);
  // final[i] += partial[i - first] * scale(i) for the part's elements,
  // which are consecutive in fragment order: its column groups j have
  // elements 4j .. 4j + 3.
  auto promotePart = [&](Value final, Value partial, int64_t firstColumn,
                         int64_t columns,
                         const std::function<Value(int64_t)> &scale) {
    int64_t first = firstColumn / 2;
    for (int64_t i = first; i < first + columns / 2; ++i) {
      Value f = LLVM::ExtractValueOp::create(b, final, i);
      Value x = LLVM::ExtractValueOp::create(b, partial, i - first);
      Value s = scale(i);
      Value updated = s ? LLVM::FMAOp::create(b, x, s, f).getResult()
                        : arith::AddFOp::create(b, f, x).getResult();
      final = LLVM::InsertValueOp::create(b, final, updated, i);
    }
    return final;
  };
  // One tile's K loop over blocks [kBegin, kEnd) from consumer iteration
  // `firstIteration` on: the tile's sums (promoted, or the single
  // accumulator of fast accumulation) and the iteration after the blocks.
  auto emitMainloop = [&](Value firstIteration, Value kBegin,
                          Value kEnd) -> std::pair<Value, Value> {
    Value zero = LLVM::ZeroOp::create(b, accType);
    SmallVector<Value> init = {firstIteration, zero};
    if (promote)
      for (int64_t columns : partColumns)
        init.push_back(LLVM::ZeroOp::create(
            b, getAccumulatorType(b.getContext(), columns)));
    ValueRange loop = kb.forLoop(
        kBegin, kEnd, kb.i32(1), init,
        [&](Value kBlock, ValueRange carried) {
          Value iteration = carried[0];
          Value stage = v.ring.stage(kb, iteration);
          auto [aLow, bLow] = stageDescriptorLows(stage);
          kb.mbarrierWait(v.ring.fullBarrier(kb, stage),
                          v.ring.consumerParity(kb, iteration));
          SmallVector<Value> next = {kb.add(iteration, kb.i32(1))};
          if (!promote) {
            NVVM::WgmmaFenceAlignedOp::create(b);
            next.push_back(issueMmas(carried[1], aLow, bLow, 0, t.tileN,
                                     /*zeroFirst=*/false));
            // Keep this block's MMAs in flight; the previous block's are
            // done, so its stage is free.
            NVVM::WgmmaWaitGroupSyncOp::create(b, 1);
            kb.ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                            kBlock, kBegin),
                      [&] {
                        releaseStage(
                            v.ring.stage(kb, kb.sub(iteration, kb.i32(1))));
                      });
            return next;
          }
          auto scale = loadStageScales(stage);
          NVVM::WgmmaFenceAlignedOp::create(b);
          SmallVector<Value> partials;
          int64_t parts = partColumns.size();
          for (int64_t q = 0, column = 0; q < parts;
               column += partColumns[q++])
            partials.push_back(issueMmas(carried[2 + q], aLow, bLow, column,
                                         partColumns[q],
                                         /*zeroFirst=*/true));
          Value final = carried[1];
          for (int64_t q = 0, column = 0; q < parts;
               column += partColumns[q++]) {
            NVVM::WgmmaWaitGroupSyncOp::create(b, parts - 1 - q);
            if (q == parts - 1)
              releaseStage(stage);
            final = promotePart(final, partials[q], column, partColumns[q],
                                scale);
          }
          next.push_back(final);
          next.append(partials);
          return next;
        });
    if (!promote) {
      // Drain the last block and free its stage.
      NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
      releaseStage(v.ring.stage(kb, kb.sub(loop[0], kb.i32(1))));
    }
    return {loop[1], loop[0]};
  };

  // The tile's epilogue on its sums `result`.
  auto emitEpilogue = [&](Value unit, Value result) {
        // The tile's place, computed only now: the mainloop reads nothing of
        // it (its scales come through the stages), so nothing of it stays
        // live across the loop, where the accumulators take the registers.
        TileCoordinate coord = emitTileOfUnit(kb, p, t, v, unit);
        Value mOffset = kb.mul(coord.mTile, kb.i32(t.tileM));
        Value nOffset = kb.mul(coord.nTile, kb.i32(t.tileN));
        Value rows[2] = {kb.add(mOffset, rowInTile),
                         kb.add(kb.add(mOffset, rowInTile), kb.i32(8))};
        SmallVector<Value> values =
            emitEpilogueValues(kb, p, t, v, result, rows, nOffset,
                               colInFragment, tensorScale);
        if (p.outputAmax) {
          // This tile's max |D| (elements inside D only), one atomic per
          // warp.
          Value running = kb.f32(0.0f);
          Value rowInBounds[2] = {kb.ult(rows[0], v.m), kb.ult(rows[1], v.m)};
          for (int64_t j = 0; j < t.tileN / 8; ++j)
            for (int e = 0; e < 2; ++e) {
              Value col = kb.add(
                  nOffset, kb.add(kb.i32(8 * j + e), colInFragment));
              Value colInBounds = kb.ult(col, kb.i32(p.n));
              for (int h = 0; h < 2; ++h)
                running = emitAmaxUpdate(
                    kb, running, values[4 * j + 2 * h + e], p.outElementType,
                    kb.andi(rowInBounds[h], colInBounds));
            }
          emitAmaxFlush(kb, running, v.amax, lane);
        }
        if (t.tmaStoreEpilogue) {
          Value rowsInTile[2] = {rowInTile, kb.add(rowInTile, kb.i32(8))};
          emitTmaStoreEpilogue(kb, p, t, v, values, rowsInTile, lane,
                               isStoreThread, mOffset, nOffset);
        } else {
          emitDirectStores(kb, p, t, v, values, rows, nOffset, colInFragment);
        }
  };

  forEachWorkSegment(
      kb, p, t, v, {kb.i32(0)},
      [&](const WorkSegment &segment, ValueRange state) {
        auto [result, iterationAfter] =
            emitMainloop(state[0], segment.kBegin, segment.kEnd);
        if (!segment.streamK) {
          emitEpilogue(segment.unit, result);
          return SmallVector<Value>{iterationAfter};
        }
        StreamKTile tile = getStreamKTileAfter(kb, p, t, v, iterationAfter);
        emitStreamKFixup(kb, t, v, tile, result, isStoreThread,
                         [&](Value sums) { emitEpilogue(tile.unit, sums); });
        return SmallVector<Value>{iterationAfter};
      });
  // Outstanding stores must finish before the CTA (and its shared memory)
  // goes away.
  if (t.tmaStoreEpilogue)
    kb.ifThen(isStoreThread, [&] { kb.bulkWaitGroup(0, /*readOnly=*/false); });
}

gpu::GPUFuncOp hopper::buildGemmKernel(OpBuilder &builder, Location loc,
                                       gpu::GPUModuleOp module, StringRef name,
                                       const GemmProblem &p,
                                       const GemmTiling &t) {
  ensureDynamicSharedMemory(builder, loc, module);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  ImplicitLocOpBuilder b(loc, builder);
  KernelBuilder kb(b);
  MLIRContext *ctx = builder.getContext();

  KernelValues v{};
  auto func = createGemmKernelFunc(b, loc, name, p, t, getNumThreads(t), v);

  v.tid = kb.threadIdX();
  v.smem = kb.dynamicSharedMemory();
  // Shared memory: the stage ring, the output staging buffer, the barriers.
  v.epilogueBuffer = kb.bytePtr(v.smem, t.stages * getStageBytes(t));
  int64_t scaleSlotsOffset = t.stages * getStageBytes(t) + getEpilogueBytes(t);
  v.scaleSlots = kb.bytePtr(v.smem, scaleSlotsOffset);
  v.ring = PipelineRing(
      kb.bytePtr(v.smem, scaleSlotsOffset + t.stages * t.stageScaleBytes),
      t.stages);
  kb.ifThen(kb.eq(v.tid, kb.i32(0)), [&] {
    v.ring.init(kb,
                /*producerArrivals=*/getProducerArrivals(p, t),
                /*consumerArrivals=*/getConsumerArrivals(t));
    kb.prefetchTensorMap(v.tmaA);
    kb.prefetchTensorMap(v.tmaB);
    if (v.tmaD)
      kb.prefetchTensorMap(v.tmaD);
  });
  if (t.clusterM > 1) {
    // The peer CTA multicasts into this CTA's stages and arrives on its
    // barriers: they must be initialized cluster-wide first.
    kb.ifThen(kb.eq(v.tid, kb.i32(0)), [&] { kb.fenceMBarrierInitCluster(); });
    kb.clusterSync();
    v.clusterRank = kb.clusterCtaRank();
    v.firstUnit = kb.divu(kb.blockIdX(), kb.i32(t.clusterM));
    v.unitStride = kb.divu(kb.gridDimX(), kb.i32(t.clusterM));
  } else {
    gpu::BarrierOp::create(b);
    v.clusterRank = kb.i32(0);
    v.firstUnit = kb.blockIdX();
    v.unitStride = kb.gridDimX();
  }
  Value numMTiles = kb.ceilDiv(v.m, t.tileM);
  v.numMUnits = t.clusterM > 1 ? kb.ceilDiv(numMTiles, t.clusterM) : numMTiles;
  v.numUnits = kb.mul(v.numMUnits, kb.i32(t.numNTiles(p.n)));
  if (t.streamK) {
    v.streamKSchedule = kb.bytePtr(v.smem, getStreamKScheduleOffset(t));
    kb.ifThen(kb.eq(v.tid, kb.i32(0)),
              [&] { emitStreamKSchedule(kb, p, t, v); });
    gpu::BarrierOp::create(b);
  }

  Value isProducer =
      kb.eq(kb.divu(v.tid, kb.i32(kWarpgroupThreads)), kb.i32(0));
  auto roles = scf::IfOp::create(b, isProducer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard roleGuard(b);
    b.setInsertionPoint(roles.thenBlock()->getTerminator());
    emitProducer(kb, p, t, v);
    b.setInsertionPoint(roles.elseBlock()->getTerminator());
    emitConsumer(kb, p, t, v);
  }
  // Neither CTA of a cluster may exit while the other can still multicast
  // into its shared memory or arrive on its barriers.
  if (t.clusterM > 1)
    kb.clusterSync();
  gpu::ReturnOp::create(b);
  (void)ctx;
  return func;
}

md::KernelMetadata hopper::buildKernelMetadata(StringRef name,
                                               const ChipInfo &chip,
                                               const GemmProblem &problem,
                                               const GemmTiling &tiling) {
  GemmTargetLayout layout;
  layout.threadsPerCta = getNumThreads(tiling);
  layout.ctaTileM = tiling.tileM;
  layout.dynamicSharedMemoryBytes = getDynamicSharedMemoryBytes(tiling);
  return buildGemmKernelMetadata(name, chip, problem, tiling, layout);
}

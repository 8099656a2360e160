//===- HopperTiling.cpp - Tiling heuristic of the sm_90a GEMM -------------===//
//
// The heuristic (tile N by padding or, for promoted accumulation, by a wave
// model over the target's SMs; as many stages as fit), the checks of a
// configured tiling, the launch variants of a dynamic-M kernel and their
// throughput table, and the kernel's shared memory and metadata.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToHopper/HopperTiling.h"
#include "FP8/Conversion/FP8ToHopper/HopperKernel.h"
#include "FP8/Conversion/FP8ToHopper/WGMMA.h"
#include "FP8/Conversion/KernelSkeleton/GemmScheduler.h"
#include "fp8schema/LaunchVariantModel.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::hopper;

/// The 128x64 tile computes about half the 128x192 tile's output per SM and
/// second, so it pays where its tiles make one wave and the other tiles
/// fill few SMs or make two waves: on an H100 (bench/NOTES.md, "Launch
/// variants") 512x2112x7168 took 19.3 us blockwise against 28.8 for the
/// pick among the other tiles. Its throughput, 60, was fitted on 60 shapes
/// (M 64-2048 x 10 N x K). From 56 K blocks on it takes ties with the
/// 64x128 tile (one above its throughput): H200, the same tiles, 1.06-1.16x
/// at M = 128 and K >= 8192, 0.99-1.05x at K = 7168, but 0.955-0.98x
/// blockwise at K <= 4096 (bench/NOTES.md, "The 128x64 tile's throughput").
static constexpr std::pair<int64_t, int64_t> kNarrowTile = {128, 64};
static constexpr int64_t kNarrowTileThroughput = 60;
static constexpr int64_t kNarrowTileTieKBlocks = 56;
/// The 64-row tiles of 128 columns or more: fast 75, fitted on an H100
/// against the 4-stage 128x256 tile at 2048x4096x7168 and 2048x14336x4096
/// (equal work per wave; the H200's value, 90, took 64x128 at M = 512 and
/// 1024, where the wide tiles ran 1.07-1.09x faster); promoted 65.
static constexpr int64_t kTile64x128Throughput = 75;
static constexpr int64_t kPromotedTile64x128Throughput = 65;
/// The tiles of the launch variants of a dynamic-M kernel (tile M, tile N):
/// for M too small to fill the SMs with the large tiles. The 144-column
/// tiles (their output staged in boxes of 16 bf16 columns) fit the SMs where
/// the 64- and 128-column steps leave a wave nearly empty, as cuBLASLt's
/// 144-wide tiles do: on an H100 (bench/NOTES.md, "Launch variants")
/// 1000x4608x3584 tensorwise 0.81x -> 0.90x cuBLASLt with 128x144 (120
/// tiles, one wave), 2048x576x7168 0.76x -> 0.91x with 64x144. Their
/// throughputs are those of the 128- and 64-row tiles (getTileThroughput),
/// which the calibration on 60 shapes put on the plateau of the best picks.
/// Last, so that the runtime's ties go to the tiles before them; only for
/// the GEMMs measured with them (wantsWideStepVariants).
static constexpr std::pair<int64_t, int64_t> kLaunchVariantTiles[] = {
    {128, 128}, kNarrowTile, {64, 128}, {64, 64}};
static constexpr std::pair<int64_t, int64_t> kWideStepVariantTiles[] = {
    {128, 144}, {64, 144}};
/// A fast kernel wider than 192 columns also gets a 128x192 variant: on an
/// H100 (bench/NOTES.md v16) the 192-wide fast tile and the 256-wide one
/// (both 4 stages, the latter staging its output in two boxes) computed
/// about the same output per SM and second (0.93-1.05x, mean 1.00x, on 13
/// shapes), so the variant wins wherever its waves hold less work
/// (4096x1536x7168: two waves either way, of 192-wide tiles instead of
/// 256-wide ones: 1.25x) and takes ties.
static constexpr std::pair<int64_t, int64_t> kFastTile = {128, 192};
static constexpr int64_t kFastTileThroughput = 101;
/// The swap-AB 16x64 tile (selectLaunchVariants): at M <= 16 its time is
/// that of streaming its 64 B rows, like the 64x64 tile's, but without 48
/// or 63 rows of zeros through the MMAs and with more stages of B in
/// flight. Its throughput is its token count, 16: a wave of its tiles costs
/// as much as its B rows, 64, which the wave-filling tiles' 80 and 112 rows
/// (throughput 70) beat at N = 10240 and 14336 where the swap-AB kernel's
/// stream-K split shares tiles between CTAs (H200, every variant timed at
/// M = 1 and 16: 1.02-1.10x; 19, a third of the 64x64 tile's 57, took the
/// swap-AB kernel there; 15 to 17 make the same picks on the 216 shapes of
/// that sweep; bench/NOTES.md, "Swap-AB tiles stream B"). The 32x64 tile
/// streams the same B rows for M <= 32 (the runtime takes a swap-AB kernel
/// only for one row of its tiles): 31, below twice 16, leaves M <= 16 to
/// the 16-token tile (2-7% faster there; "Swap-AB with 32 tokens"; 33
/// took the 32-token tile there) and, at M = 17-32, takes it over the
/// 64-row tiles but for more than a wave of its tiles (N = 10240: 64x80
/// ran 1.1x faster); 30 to 32 pick the same.
static constexpr int64_t kSwapABThroughput = 16;
static constexpr int64_t kWideSwapABThroughput = 31;

/// The launch variants of a masked grouped GEMM (decode; the caller's
/// expected rows per group choose among them, fp8rt_kernel_for_expected_m):
/// DeepGEMM's masked candidates, tile M 64 or 128 by tile N from the
/// kernel's own down in steps of 16, those the kernel takes (getTilingError;
/// with 128x128 B scales at most two B blocks per tile: 144, 160 and 192
/// beyond 128). Not wider than the kernel's own tile (a masked kernel's
/// direct stores of wider fast tiles spill); 128-row tiles not narrower than
/// 112 columns: every variant is a kernel of the module, and the narrower
/// ones would be the runtime's choice for 3% of decode problems (G
/// 1-64, N 576-14336, expected_m 1-1024, 132 SMs).
static constexpr int64_t kMaskedVariantTileNStep = 16;
static constexpr std::pair<int64_t, int64_t> kMaskedVariantMinTileN[] = {
    {128, 112}, {64, 16}};

/// A promoted kernel (blockwise 1x128 x 128x128, tensorwise) also gets the
/// 256x128 tile of two 64-row waves per consumer, each wave's MMAs one
/// promotion part: where the 128x192 tiles leave much of the last wave
/// empty it computes the same output in fewer waves. On an H100
/// (bench/NOTES.md, "Launch variants"), blockwise, against the 128x192
/// kernel: 4096x4096x7168 1.08x, 4096x7168x16384 1.08x, 4096x4096x14336
/// 1.075x, 2048x4096x7168 1.05x; 8192^3 0.94x, 4096x2112x7168 0.76x. Its
/// throughput (kWaveTileThroughput) is fitted to those 14 shapes; with it
/// the runtime's picks for tensorwise ran 1.02-1.06x faster at N = 4096.
/// With two K blocks a trip (HopperMainloop.cpp) the blockwise tile
/// measured 0.98-1.14x the 128x192 one on 12 of the 14 shapes (0.80x at
/// 4096x2112x7168): 102 picks the faster on 13 and ran the runtime's picks
/// 1.018x faster (geomean of 7 shapes, up to 1.056x at 4096x14336x4096),
/// but lost 0.8% for tensorwise (0.94x at 4096x24576x1536), which keeps 96.
/// 101: 102 tied 3 waves of it with 4 of 128x160 and 5 of 128x128 tiles
/// (throughput 85), which ran 1.05x faster (H200, 1000x10240x8192).
static constexpr std::pair<int64_t, int64_t> kWaveVariantTile = {kWaveTileM,
                                                                 kScaleBlock};
static constexpr int64_t kWaveTileThroughput = 96;
static constexpr int64_t kBlockwiseWaveTileThroughput = 101;

/// Promoted GEMMs without an FP8 result (the ones measured), but for the
/// rowwise ones, whose column scales of two waves spilled 12 bytes (ptxas,
/// N = 14336 and 24576); the tile's own limits (128x128 or coarser B
/// scales, not grouped) are getTilingError's, which every variant passes.
static bool wantsWaveTileVariant(const GemmProblem &p) {
  return p.promoteInterval != 0 && !p.hasFP8Output() &&
         p.bScale != ScaleMode::Row;
}

/// The GEMMs that get the variants of widths off the 64-column steps (144
/// columns, wave-filling): dense, a 2-byte output, per-tensor, rowwise or
/// 128x128 B scales, not accumulating into C (the ones measured; a 1x128 B
/// tile wider than 128 columns holds its column scales beside the sums).
static bool takesOffStepWidths(const GemmProblem &p) {
  return !p.isGrouped() && !p.accumulateIntoC && !p.hasFP8Output() &&
         getByteWidth(p.outElementType) == 2 && !p.hasBlockwiseColumnScales();
}

/// The 144-column variants: where they cover N in fewer tile columns than
/// the 128-column tiles.
static bool wantsWideStepVariants(const GemmProblem &p) {
  int64_t wide = kWideStepVariantTiles[0].second;
  return llvm::divideCeil(p.n, wide) < llvm::divideCeil(p.n, kScaleBlock) &&
         takesOffStepWidths(p);
}

/// The wave-filling variants: 128- and 64-row tiles of the least multiple
/// of 16 columns that covers N in at most one tile per SM, where that lies
/// between the 64-column tile and the widest one and is none of the other
/// tiles' widths (multiples of 64, 144). A small M is bound by the rate at
/// which the CTAs stream B, and one full wave of narrower tiles beats
/// tiles that leave SMs idle or make a second wave: on an H200
/// (bench/NOTES.md, "Wave-filling tiles"), against the runtime's pick
/// before, N = 10240 (80 columns) at M = 24-128 1.27-1.35x, N = 28672
/// (224, fast accumulation) at M = 24-64 1.09-1.13x, N = 14336 (112) at
/// M = 24-64 1.05-1.07x. Their throughput, 70, takes them there and
/// leaves M >= 256 (two waves of them, 0.80-0.98x) to the other tiles;
/// ties go to the 128-row tile (at M = 128 and N = 10240 it took 0.79x
/// the time of two rows of 64-row tiles). For the GEMMs of the 144-column
/// variants (takesOffStepWidths); getTilingError drops the tiles a
/// recipe cannot take (promoted 224 columns).
static constexpr int64_t kWaveFillTileNStep = 16;
static constexpr int64_t kWaveFillTileM[] = {128, 64};
static constexpr int64_t kWaveFillTileThroughput = 70;

/// The two-row wave-filling variant: 128x160 where 160 is the least
/// multiple of 16 columns that covers N in one wave of two tile rows (N =
/// 9505-10560 on 132 SMs; DeepGEMM's tile at N = 10240), at the 128-row
/// tiles' throughput. H200, N = 10240, M = 256 and 512, against the pick
/// before: blockwise 1.06-1.08x, promoted 1.03-1.06x, fast 1.01-1.04x; the
/// rule's other widths lost (80-112) or never won (176) (bench/NOTES.md,
/// "Two-row wave-filling tiles").
static constexpr std::pair<int64_t, int64_t> kTwoRowWaveFillTile = {128, 160};

/// The least multiple of kWaveFillTileNStep columns covering N in
/// `tileRows` rows of at most one tile per SM, within the bounds above.
static std::optional<int64_t>
getWaveFillTileN(const GemmProblem &p, int64_t numSMs, int64_t tileRows = 1) {
  if (!takesOffStepWidths(p) || numSMs < 1)
    return std::nullopt;
  int64_t tileN = llvm::alignTo(llvm::divideCeil(tileRows * p.n, numSMs),
                                kWaveFillTileNStep);
  if (tileN <= 64 || tileN > kColumnWaveTileN || tileN % 64 == 0 ||
      tileN == kWideStepVariantTiles[0].second)
    return std::nullopt;
  return tileN;
}

static SmallVector<std::pair<int64_t, int64_t>>
getLaunchVariantTiles(const GemmProblem &p, const GemmTiling &primary,
                      int64_t numSMs) {
  SmallVector<std::pair<int64_t, int64_t>> tiles;
  if (p.isMasked() && ShapedType::isDynamic(p.staticM)) {
    int64_t widest =
        primary.tileN / kMaskedVariantTileNStep * kMaskedVariantTileNStep;
    for (auto [tileM, narrowest] : kMaskedVariantMinTileN)
      for (int64_t tileN = widest; tileN >= narrowest;
           tileN -= kMaskedVariantTileNStep)
        tiles.push_back({tileM, tileN});
    return tiles;
  }
  if (p.promoteInterval == 0 && primary.tileN > kFastTile.second)
    tiles.push_back(kFastTile);
  if (wantsWaveTileVariant(p))
    tiles.push_back(kWaveVariantTile);
  tiles.append(std::begin(kLaunchVariantTiles), std::end(kLaunchVariantTiles));
  if (wantsWideStepVariants(p))
    tiles.append(std::begin(kWideStepVariantTiles),
                 std::end(kWideStepVariantTiles));
  if (std::optional<int64_t> tileN = getWaveFillTileN(p, numSMs))
    for (int64_t tileM : kWaveFillTileM)
      tiles.push_back({tileM, *tileN});
  if (getWaveFillTileN(p, numSMs, /*tileRows=*/2) == kTwoRowWaveFillTile.second)
    tiles.push_back(kTwoRowWaveFillTile);
  return tiles;
}

int64_t hopper::getDynamicSharedMemoryBytes(const GemmTiling &t) {
  return getSplitKOffset(t) + getSplitKBytes(t);
}

BScaleClasses::BScaleClasses(const GemmTiling &t) {
  int64_t g = std::gcd(t.tileN, kScaleBlock);
  for (int64_t j = 0; j < t.tileN / 8; ++j) {
    int64_t bound = 8 * j < g ? 0
                    : 8 * j >= kScaleBlock
                        ? kScaleBlock
                        : (kScaleBlock - 8 * j + g - 1) / g * g;
    auto *it = llvm::find(bounds, bound);
    classOfGroup.push_back(it - bounds.begin());
    if (it == bounds.end())
      bounds.push_back(bound);
  }
}

/// The scale slot of a blockwise stage: the K block's A scales of the tile's
/// rows, then its B scale(s) (128x128 B tiles) or the B scales of the tile's
/// columns (1x128 B tiles), f32, padded to 16 bytes.
static int64_t getStageScaleBytes(const GemmProblem &p, const GemmTiling &t) {
  if (!p.isBlockwise())
    return 0;
  int64_t bScales =
      p.hasBlockwiseColumnScales() ? t.tileN : BScaleClasses(t).bounds.size();
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
  // The 128x256 tile in column waves where it pads N no more than 128
  // would: for an FP8 result in 1x128 blocks (whose tiles are whole
  // blocks) and for the blockwise m_contiguous GEMMs. On an H100
  // (bench/NOTES.md, "The 128x256 tile in column waves"), against 128x128
  // with 4 stages, outputs identical: FP8 result 1.06-1.19x dense and
  // grouped; m_contiguous bf16 out 1.00-1.04x the 128x192 tile. Dense bf16
  // out keeps 128x192 (0.97x there).
  // Not for m_masked and k_grouped GEMMs: their guarded direct stores of
  // 256-column tiles spill.
  bool wide = p.outQuantization == OutputQuantization::Block1x128 ||
              (p.isGrouped() && p.isBlockwise());
  if (wide && !p.hasGroupedOutput() &&
      pickLeastPaddedTileN(p.n, kScaleBlock) == kColumnWaveTileN)
    return kColumnWaveTileN;
  if (p.outQuantization == OutputQuantization::Block1x128)
    return kScaleBlock;
  auto cost = [&](int64_t tileN, double rate) {
    int64_t nTiles = llvm::divideCeil(p.n, tileN);
    double work = static_cast<double>(nTiles * tileN);
    if (!ShapedType::isDynamic(p.staticM)) {
      int64_t mTiles = llvm::divideCeil(p.staticM, 128);
      int64_t waves = llvm::divideCeil(mTiles * nTiles, numSMs);
      work = static_cast<double>(waves * tileN);
    }
    return work / rate;
  };
  return cost(192, 1.0) <= cost(128, 0.9) ? 192 : 128;
}

static void setStreamK(GemmTiling &t, bool streamK) {
  t.streamK = streamK;
  t.workspaceBytesPerCta =
      streamK ? kStreamKFlagBytes + 4 * t.tileM * t.tileN : 0;
}

/// A blockwise masked GEMM of fewer K blocks keeps the direct stores:
/// beside the staged epilogue, ptxas spilled 28-40 bytes at K = 512 to 768
/// in the 64x96, 64x192 and 128x192 tiles (0-4 with direct stores), and
/// nothing from K = 896 to 14336.
static constexpr int64_t kMinMaskedStagedKBlocks = 8;

/// f32 outputs (wgrad) and accumulate-into-C keep the direct stores: their
/// staging buffer would halve the pipeline depth. So does a k_grouped GEMM,
/// whose [G, M, N] D a tile of a group's last rows must not overrun. A
/// masked grouped GEMM stores only each group's valid rows (a TMA store
/// clips at the tensor's edge, not at the run-time count): it stages its
/// tile and stores it with the consumers' guarded 16-byte stores
/// (guardedStagedStores), where D's rows are whole 16-byte chunks and, if
/// blockwise, K has at least kMinMaskedStagedKBlocks blocks. An FP8 output
/// stages its quantized bytes (a box of 128 columns: one 1x128 scale
/// block), half the buffer of a 2-byte output. The 1D x 1D GEMM
/// accumulating into C (the wgrad GEMM's main-grad form) stages its f32
/// tile: in place (C is D) it adds the tile into D with a TMA reduce-add,
/// otherwise it adds C in registers and TMA-stores D (emitTileEpilogue).
static bool canStageOutput(const GemmProblem &p) {
  if (p.accumulateIntoC && p.hasBlockwiseColumnScales())
    return !p.hasGroupedOutput();
  if (p.isMasked() &&
      (p.n * getByteWidth(p.outElementType) % 16 != 0 ||
       (p.isBlockwise() &&
        p.numKBlocks(kScaleBlock) < kMinMaskedStagedKBlocks)))
    return false;
  return (getByteWidth(p.outElementType) == 2 || p.hasFP8Output()) &&
         !p.accumulateIntoC && !p.isKGrouped();
}

/// Stages `t`'s output tile in shared memory where `staged` (stored with
/// TMA, or with the consumers' guarded stores for a masked GEMM), or has
/// each thread store its fragment directly.
static void setStagedEpilogue(const GemmProblem &p, GemmTiling &t,
                              bool staged) {
  t.tmaStoreEpilogue = staged;
  t.guardedStagedStores = staged && p.isMasked();
}

/// A tile whose kMaxPipelineStages stages leave room for more takes up to
/// this many. Only the 64x64 launch variant does (13 stages instead of 8,
/// 14 without a staged output): at M = 1 and 16 a CTA streams its B tile
/// through the stages, one K block each, and more of them in flight read it
/// faster (H200, against 8 stages: 0.85-1.01x the time at N x K = 8192 x
/// 8192 and 4096 x 14336, 0.95-1.06x at 2112 x 7168; fast tensorwise at N =
/// 576 1.12-1.15x, a shape the stream-K variant takes; bench/NOTES.md).
static constexpr int64_t kMaxDeepPipelineStages = 16;

/// Stages of `t` that fit in `maxSharedMemory` bytes with `maxStages`
/// barrier pairs reserved (at most `maxStages`).
static int64_t getStagesThatFit(const GemmTiling &t, int64_t maxSharedMemory,
                                int64_t maxStages) {
  int64_t available = maxSharedMemory - getEpilogueBytes(t) -
                      PipelineRing::barrierBytes(maxStages) -
                      (t.streamK ? kStreamKScheduleBytes : 0) -
                      getSplitKBytes(t);
  return std::min(maxStages,
                  available / (getStageBytes(t) + t.stageScaleBytes));
}

/// Stages of `t` that fit in `maxSharedMemory` bytes: at most
/// kMaxPipelineStages, or up to kMaxDeepPipelineStages for a tile that has
/// room for more and no stream-K schedule (the 64x64 stream-K variant took
/// 0.97-1.10x the time with 13 stages as with 8; bench/NOTES.md).
static int64_t getStagesThatFit(const GemmTiling &t, int64_t maxSharedMemory) {
  int64_t stages = getStagesThatFit(t, maxSharedMemory, kMaxPipelineStages);
  if (stages < kMaxPipelineStages || t.streamK)
    return stages;
  return std::max(stages, getStagesThatFit(t, maxSharedMemory,
                                           kMaxDeepPipelineStages));
}

/// A staging buffer of fewer store boxes than the tile's, used in turn
/// (emitTmaStoreEpilogue), instead of the whole tile; the tile's boxes must
/// alternate evenly: two for a tile of an even number of more boxes, one for
/// a tile of two or three (whose pairs would be the whole tile or not
/// alternate evenly); 0: none. Not with an activation: the tile's output
/// values, computed before the first box is written, stay live across the
/// boxes' barriers, and the GELU of a 128x256 tile spilled 296 bytes.
static constexpr int64_t kStagingBoxPair = 2;

static int64_t getStagingBoxesInTurn(const GemmProblem &p,
                                     const GemmTiling &t) {
  int64_t boxes = t.numStoreBoxes();
  if (!t.tmaStoreEpilogue || p.activation)
    return 0;
  if (boxes > kStagingBoxPair && boxes % kStagingBoxPair == 0)
    return kStagingBoxPair;
  return boxes == kStagingBoxPair || boxes == 3 ? 1 : 0;
}

static GemmTiling withStagingBoxes(GemmTiling t, int64_t boxes) {
  t.stagingBoxes = boxes;
  return t;
}

/// The fast 128x128 tile runs ping-pong (GemmTiling::pingPong: each
/// consumer computes whole tiles, one's epilogue under the other's MMAs)
/// where its two staging buffers leave at least this many stages: on an
/// H200 it ran 1.02-1.07x the cooperative tile (6 stages) at M = 512-2048
/// over the grid's N x K (bench/NOTES.md, "Ping-pong"). The wider fast
/// tiles' sums do not fit twice in a warpgroup, and the 128x256 tile
/// stays ahead of every ping-pong tile at M >= 4096.
static constexpr int64_t kMinPingPongStages = 5;

/// Not with a bias or an activation: their values beside a consumer's 128
/// sums spilled 4-48 bytes (rowwise with GELU, and with a bias at N =
/// 1040).
static bool wantsPingPong(const GemmProblem &p, const GemmTiling &t) {
  return p.promoteInterval == 0 && t.tileM == 128 && t.tileN == 128 &&
         !t.streamK && !p.isGrouped() && !p.biasElementType && !p.activation;
}

/// The heuristic's tiling for tile `tileM` x `tileN`: TMA-store epilogue
/// where it fits, as many stages as shared memory holds (getStagesThatFit),
/// staging the output in two boxes where that makes room
/// for another stage (the 128x256 tile: 4 stages instead of 3), the fast
/// 128x128 tile in ping-pong (wantsPingPong).
static GemmTiling getDefaultTiling(const GemmProblem &p, int64_t tileM,
                                   int64_t tileN, int64_t maxSharedMemory,
                                   bool streamK = false) {
  GemmTiling t;
  t.tileM = tileM;
  t.tileN = tileN;
  // One promotion part: two waves per consumer, each wave's MMAs one group
  // (measured faster than 64-column halves, bench/NOTES.md); and the 1D x
  // 1D (always promoted) 128x128 tile but for accumulate-into-C, whose
  // 96 + 32 parts read shared memory at its limit (bench/NOTES.md, "1D x
  // 1D"). On an H100, one part ran dense bf16 out 1.6% and k_grouped f32
  // out 1.2-2.1% faster, in place 4% slower; with 128x128 B scales
  // (per-tile products, not per-element ones) it measured 0.99-1.02x the
  // two parts (dense M = 128-2048, m_masked, m_contiguous): not taken.
  bool wholeTileWaves =
      tileM == kWaveTileM ||
      (tileM == 128 && tileN == kScaleBlock && p.hasBlockwiseColumnScales() &&
       !p.accumulateIntoC);
  if (wholeTileWaves)
    t.promotionParts = 1;
  setStreamK(t, streamK);
  t.outputBytes = getByteWidth(p.outElementType);
  t.narrowStoreBoxes = true;
  setStagedEpilogue(p, t,
                    canStageOutput(p) && tileN % t.storeBoxColumns() == 0);
  setScaleSlots(p, t);
  t.stages = getStagesThatFit(t, maxSharedMemory);
  if (getStagingBoxesInTurn(p, t) == kStagingBoxPair) {
    GemmTiling paired = withStagingBoxes(t, kStagingBoxPair);
    paired.stages = getStagesThatFit(paired, maxSharedMemory);
    if (paired.stages > t.stages)
      t = paired;
  }
  if (wantsPingPong(p, t)) {
    GemmTiling pingPong = t;
    pingPong.pingPong = true;
    pingPong.stages = getStagesThatFit(pingPong, maxSharedMemory);
    if (pingPong.stages >= kMinPingPongStages)
      t = pingPong;
  }
  return t;
}

/// The swap-AB decode variants (GemmTiling::swapAB): 16 or 32 tokens x 64 B
/// rows, the B rows as the MMA's 64-row side and the tokens as its N,
/// stream-K over a CTA per SM (every SM streams B), stages up to
/// kMaxDeepPipelineStages (10 or 12 KiB each: 128 or 192 KiB of B and A in
/// flight per SM). With 32 tokens, M = 17-32 streams B once instead of
/// twice (H200: 1.16-1.37x the runtime's pick before at N x K = 4096 x
/// 14336, 8192 x 28672 and 2112 x 7168; bench/NOTES.md).
static constexpr int64_t kSwapABTileN = 64;
static constexpr int64_t kSwapABTokens[] = {16, 32};

/// Whether a dynamic-M GEMM gets the swap-AB variant: its epilogue has the
/// scales, bias and activation of a bf16/f16/f32 D, not C, the output amax,
/// an FP8 D or a grouped GEMM's groups; blockwise with 128x128 B scales
/// only (a 64-row tile lies in one B block).
static bool wantsSwapABVariant(const GemmProblem &p) {
  return !p.accumulateIntoC && !p.outputAmax && !p.hasFP8Output() &&
         !p.isGrouped() && !p.hasBlockwiseColumnScales();
}

/// The K-split swap-AB variants (GemmTiling::splitK): clusters of 2 and 4
/// CTAs per tile, with no workspace (the sums go through the first CTA's
/// shared memory). Each is built where its clusters cover the tiles in
/// one wave of the target's SMs and each CTA keeps 4 K blocks at least.
static constexpr int64_t kSplitKVariants[] = {2, 4};
static constexpr int64_t kMinSplitKBlocks = 4;

static GemmTiling getSwapABTiling(const GemmProblem &p, int64_t maxSharedMemory,
                                  int64_t tokens, int64_t splitK = 1) {
  GemmTiling t;
  t.tileM = tokens;
  t.tileN = kSwapABTileN;
  t.swapAB = true;
  t.splitK = splitK;
  setStreamK(t, splitK == 1);
  t.outputBytes = getByteWidth(p.outElementType);
  setScaleSlots(p, t);
  t.stages = getStagesThatFit(t, maxSharedMemory, kMaxDeepPipelineStages);
  return t;
}

/// Whether the K-split swap-AB variant of `splitK` CTAs per tile is built
/// (selectLaunchVariants): its clusters cover the tiles in one wave.
static bool wantsSplitKVariant(const GemmProblem &p, int64_t splitK,
                               const TargetInfo &target) {
  int64_t tiles = llvm::divideCeil(p.n, kSwapABTileN);
  return tiles * splitK <= target.numMultiprocessors &&
         p.numKBlocks(kScaleBlock) >= kMinSplitKBlocks * splitK;
}

/// The launch-variant model's view of a tiling: the fields its kernel's
/// metadata gives the runtime's choice (selectLaunchVariant).
static fp8schema::LaunchShape
getLaunchShape(const GemmProblem &p, const GemmTiling &t, int64_t numSMs) {
  fp8schema::LaunchShape shape;
  shape.tileM = t.tileM;
  shape.tileN = t.tileN;
  shape.throughput = getTileThroughput(p, t, numSMs);
  shape.clusterWidth = t.clusterCtas();
  shape.kSplit = t.splitK;
  shape.streamK = t.streamK;
  shape.swapAB = t.swapAB;
  return shape;
}

/// The swap-AB tilings of `tokens` a GEMM gets (selectLaunchVariants): the
/// stream-K one, then the K-split ones whose clusters cover the tiles in
/// one wave, those the kernel takes (getTilingError).
static SmallVector<GemmTiling> getSwapABTilings(const GemmProblem &p,
                                                const TargetInfo &target,
                                                int64_t tokens) {
  SmallVector<GemmTiling> tilings;
  auto add = [&](GemmTiling t) {
    if (getTilingError(p, t, target).empty())
      tilings.push_back(t);
  };
  add(getSwapABTiling(p, target.maxSharedMemoryPerBlock, tokens));
  for (int64_t splitK : kSplitKVariants)
    if (wantsSplitKVariant(p, splitK, target))
      add(getSwapABTiling(p, target.maxSharedMemoryPerBlock, tokens, splitK));
  return tilings;
}

/// The stream-K launch variant: 64x64 tiles whose K blocks the kernel
/// splits over a CTA per SM (the runtime launches it with every SM).
static constexpr std::pair<int64_t, int64_t> kStreamKVariantTile = {64, 64};
/// K blocks a GEMM needs for the stream-K variant: each CTA of a split
/// still runs several blocks (measured with 56 to 112).
static constexpr int64_t kStreamKVariantMinKBlocks = 32;

/// Whether a dynamic-M GEMM gets the stream-K 64x64 variant: one row of
/// 64x64 tiles fills few enough of the target's SMs for the split to pay
/// (fp8schema::streamKSplitPays, the runtime's rule), so that a small M
/// leaves SMs idle, and K has kStreamKVariantMinKBlocks blocks. On an H200
/// at M = 1 to 64, against the 64x64 kernel: blockwise 0.62-0.80x the time
/// at N = 576 and 2112 (K = 7168); fast tensorwise 0.88-0.97x; at N = 8192
/// (128 tiles) 1.01-1.02x. On an H100 at N = 4096 (64 tiles) 1.01-1.22x
/// blockwise, hence the share (bench/NOTES.md). Not with an activation,
/// the output amax or an FP8 output, whose epilogues no stream-K kernel has
/// been checked with, nor for grouped GEMMs (their scheduler walks whole
/// tiles).
static bool wantsStreamKVariant(const GemmProblem &p,
                                const TargetInfo &target) {
  double rowTiles =
      static_cast<double>(llvm::divideCeil(p.n, kStreamKVariantTile.second));
  return !p.activation && !p.outputAmax && !p.hasFP8Output() &&
         !p.isGrouped() &&
         p.numKBlocks(kScaleBlock) >= kStreamKVariantMinKBlocks &&
         fp8schema::streamKSplitPays(
             rowTiles, static_cast<double>(target.numMultiprocessors),
             /*oneTileRow=*/true);
}

/// The launch variants' tilings beside `primary`, in the order the
/// runtime's ties go to (selectLaunchVariants), whatever M.
static SmallVector<GemmTiling> getLaunchCandidates(const GemmProblem &p,
                                                   const GemmTiling &primary,
                                                   const TargetInfo &target) {
  SmallVector<GemmTiling> variants;
  auto add = [&](GemmTiling t) {
    if (getTilingError(p, t, target).empty())
      variants.push_back(t);
  };
  for (auto [tileM, tileN] :
       getLaunchVariantTiles(p, primary, target.numMultiprocessors))
    if (primary.tileM != tileM || primary.tileN != tileN)
      add(getDefaultTiling(p, tileM, tileN, target.maxSharedMemoryPerBlock));
  // Last, so that the runtime's ties go to the whole-tile kernels.
  if (wantsStreamKVariant(p, target))
    add(getDefaultTiling(p, kStreamKVariantTile.first,
                         kStreamKVariantTile.second,
                         target.maxSharedMemoryPerBlock, /*streamK=*/true));
  if (wantsSwapABVariant(p))
    for (int64_t tokens : kSwapABTokens)
      llvm::append_range(variants, getSwapABTilings(p, target, tokens));
  return variants;
}

FailureOr<GemmTiling> hopper::selectGemmTiling(Operation *op,
                                               const GemmProblem &p,
                                               GemmConfigAttr config,
                                               const TargetInfo &target) {
  int64_t maxSharedMemory = target.maxSharedMemoryPerBlock;
  GemmTiling t;
  if (config) {
    t = getGemmTiling(config, getByteWidth(p.outElementType),
                      canStageOutput(p), /*narrowBoxes=*/true);
    setStagedEpilogue(p, t, t.tmaStoreEpilogue);
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
    // Stage the output in two boxes (or one, for a tile of two or three)
    // where that makes the configured stages fit (and they do not beside
    // the whole tile).
    if (int64_t boxes = getStagingBoxesInTurn(p, t);
        boxes && getDynamicSharedMemoryBytes(t) > maxSharedMemory &&
        getDynamicSharedMemoryBytes(withStagingBoxes(t, boxes)) <=
            maxSharedMemory)
      t = withStagingBoxes(t, boxes);
    // A kernel accumulating into C stages its f32 tile only where it fits
    // beside the configured stages; otherwise it stores directly.
    // So does a tile whose output rows are no whole 128-byte boxes (128x160:
    // 64-byte boxes) where its staging buffer leaves no room for the
    // configured stages.
    bool narrowBoxes = t.outputBytes > 1 && t.storeBoxBytes() < 128;
    if ((accumulatesThroughStaging(p, t) || narrowBoxes) &&
        getDynamicSharedMemoryBytes(t) > maxSharedMemory)
      setStagedEpilogue(p, t, false);
  } else if (p.promoteInterval != 0) {
    t = getDefaultTiling(p, 128,
                         pickPromotedTileN(p, target.numMultiprocessors),
                         maxSharedMemory);
  } else {
    // A TMA-store epilogue stores boxes of 128 bytes of output columns.
    int64_t storeBoxColumns =
        kSwizzle128BRowBytes / getByteWidth(p.outElementType);
    int64_t multipleOf = canStageOutput(p) ? storeBoxColumns : 1;
    if (p.outQuantization == OutputQuantization::Block1x128)
      multipleOf = kScaleBlock;
    int64_t tileN = pickLeastPaddedTileN(p.n, multipleOf);
    // A masked (or k_grouped) grouped GEMM's direct, guarded stores of
    // per-row scaled 256-column tiles spill (ptxas): 128 columns.
    if (p.hasGroupedOutput())
      tileN = std::min<int64_t>(tileN, 128);
    t = getDefaultTiling(p, 128, tileN, maxSharedMemory);
  }
  std::string error = getTilingError(p, t, target);
  if (!error.empty())
    return op->emitOpError() << error;
  // A static M takes the kernel the runtime would launch for it among the
  // launch variants: the same candidates in the same order, the same cost
  // on the target's SMs (negative: no candidate for that M). But for the
  // stream-K ones: the module function that launches the kernel (every
  // function gets one) cannot give it the workspace the runtime owns.
  if (!config && !ShapedType::isDynamic(p.staticM)) {
    int64_t sms = target.numMultiprocessors;
    auto cost = [&](const GemmTiling &c) {
      return fp8schema::launchCost(getLaunchShape(p, c, sms), p.staticM, p.n,
                                   sms);
    };
    double bestCost = cost(t);
    for (const GemmTiling &candidate : getLaunchCandidates(p, t, target)) {
      if (candidate.workspaceBytesPerCta)
        continue;
      double candidateCost = cost(candidate);
      if (candidateCost >= 0 && candidateCost < bestCost) {
        t = candidate;
        bestCost = candidateCost;
      }
    }
  }
  return t;
}

/// The 64x64 tile: 57; promoted one K block at a time 45, in pairs 57 (H200;
/// bench/NOTES.md, "Launch variants with K blocks in pairs").
static constexpr int64_t kTile64Throughput = 57;
static constexpr int64_t kPromotedTile64Throughput = 45;

int64_t hopper::getTileThroughput(const GemmProblem &p, const GemmTiling &t,
                                  int64_t numSMs) {
  if (t.swapAB)
    return t.tileM > kSwapABTokens[0] ? kWideSwapABThroughput
                                      : kSwapABThroughput;
  if (!t.streamK && getClusterSize(t) == 1 &&
      llvm::is_contained(kWaveFillTileM, t.tileM) &&
      getWaveFillTileN(p, numSMs) == t.tileN)
    return kWaveFillTileThroughput;
  bool promote = p.promoteInterval != 0;
  if (!promote && std::make_pair(t.tileM, t.tileN) == kFastTile)
    return kFastTileThroughput;
  int64_t tile64x128 =
      promote ? kPromotedTile64x128Throughput : kTile64x128Throughput;
  if (std::make_pair(t.tileM, t.tileN) == kNarrowTile)
    return p.numKBlocks(kScaleBlock) >= kNarrowTileTieKBlocks
               ? tile64x128 + 1
               : kNarrowTileThroughput;
  if (t.tileM == 64 && t.tileN < 128)
    return promote && !promotesBlockPairs(p, t) ? kPromotedTile64Throughput
                                                : kTile64Throughput;
  if (t.tileM == kWaveTileM)
    return p.isBlockwise() ? kBlockwiseWaveTileThroughput : kWaveTileThroughput;
  if (t.tileM == 64)
    return tile64x128;
  if (t.tileN < 192)
    return promote ? 85 : 92;
  return 100;
}

SmallVector<GemmTiling> hopper::selectLaunchVariants(const GemmProblem &p,
                                                     const GemmTiling &primary,
                                                     GemmConfigAttr config,
                                                     const TargetInfo &target) {
  if (config || !ShapedType::isDynamic(p.staticM))
    return {};
  return getLaunchCandidates(p, primary, target);
}

md::KernelMetadata hopper::buildKernelMetadata(StringRef name,
                                               const ChipInfo &chip,
                                               const GemmProblem &problem,
                                               const GemmTiling &tiling) {
  GemmTargetLayout layout;
  layout.threadsPerCta = getNumThreads(tiling);
  layout.ctaTileM = tiling.tileM;
  layout.dynamicSharedMemoryBytes = getDynamicSharedMemoryBytes(tiling);
  md::KernelMetadata metadata =
      buildGemmKernelMetadata(name, chip, problem, tiling, layout);
  if (tiling.swapAB)
    metadata.gemm->swapAb = true;
  return metadata;
}

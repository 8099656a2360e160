//===- HopperPromotionPlan.cpp - Promotion of the sm_90a K loop -----------===//
//
// How a consumer of promoted accumulation splits a K block's MMAs: the
// column parts issued and promoted in turn, column waves of the 256-wide
// tiles, and K blocks in pairs for the 64-row tiles.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToHopper/HopperKernel.h"
#include "FP8/Conversion/FP8ToHopper/HopperTiling.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::hopper;

/// The column parts of a promoted tile, issued and promoted in this order
/// (emitConsumer): the first about two thirds of the tile in a multiple of
/// 32 columns, so that its promotion takes less time than the second
/// part's MMAs, which alone leave the tensor cores idle while promoted.
/// For 192: 128 + 64, measured ahead of 96 + 96, 64 + 128 and 144 + 48
/// (H200, bench/NOTES.md v14). Up to 64 columns, one part: 128x64 in two
/// ran 0.86-0.95x blockwise at M = 128-512 (twice the wgmmas, reading A).
static SmallVector<int64_t> getPromotionParts(int64_t tileN) {
  if (tileN <= 64)
    return {tileN};
  int64_t first = std::min<int64_t>((2 * tileN + 95) / 96 * 32, tileN - 32);
  return {first, tileN - first};
}
/// With several waves per consumer the groups (wave, part) form one chain
/// in which each part's promotion overlaps the next group's MMAs and only
/// the last group's promotion is exposed (emitWavePromotedBlock), so the
/// parts are equal halves.
static SmallVector<int64_t> getWavePromotionParts(int64_t tileN) {
  if (tileN <= 64)
    return {tileN};
  int64_t first = tileN / 16 * 8;
  return {first, tileN - first};
}
bool hopper::hasColumnWaves(const GemmProblem &p, const GemmTiling &t) {
  return p.promoteInterval != 0 && getAccumulatorColumns(t) > kMaxPromotedTileN;
}

/// The widest tile whose K blocks are promoted in pairs: its sums and two
/// partial accumulators take 3 x tile N / 2 registers per thread; with
/// 1x128 B scales (tile N / 4 more a block) 64x128 spilled 352 bytes.
static constexpr int64_t kMaxBlockPairTileN = 128;
static constexpr int64_t kMaxBlockPairColumnScaleTileN = 64;

/// The 128-row tiles of one wave (a 64-row block per consumer, as the
/// 64-row tile's one consumer) pair their blocks with per-tensor scales,
/// and blockwise when the tile's columns are one 128x128 B block (dense
/// GEMMs; the grouped ones not measured). On an H200 (bench/NOTES.md, "K
/// blocks in pairs for the 128-row tiles", "Scale loads behind a
/// warpgroup's own MMAs") the paired 128x128 tile ran 0.96-1.09x promoted
/// tensorwise (geomean 1.03 over 20 shapes, 1.004-1.047 where the runtime
/// takes it) and, with both blocks' scales read before their MMAs,
/// 0.98-1.07x blockwise (geomean 1.027 over 12 shapes, 1.00-1.04 where the
/// runtime takes it); blockwise 128x64 0.95-1.04x and 128x80 0.95x,
/// rowwise 0.93-1.07x.
static bool pairsBlocksOfRows(const GemmProblem &p, const GemmTiling &t) {
  bool perTensor =
      p.aScale == ScaleMode::Tensor && p.bScale == ScaleMode::Tensor;
  bool oneBBlock = p.isBlockwise() && !p.hasBlockwiseColumnScales() &&
                   !p.isGrouped() && t.tileM == 128 && t.tileN == kScaleBlock;
  return getNumWaves(t) == 1 && (t.tileM == 64 || perTensor || oneBBlock);
}

bool hopper::promotesBlockPairs(const GemmProblem &p, const GemmTiling &t) {
  return p.promoteInterval != 0 && !t.swapAB && pairsBlocksOfRows(p, t) &&
         t.tileN <= (p.hasBlockwiseColumnScales()
                         ? kMaxBlockPairColumnScaleTileN
                         : kMaxBlockPairTileN) &&
         t.promotionParts == 0 && !p.outElementType.isF32();
}

PromotionPlan hopper::getPromotionPlan(const GemmProblem &p,
                                       const GemmTiling &t) {
  int64_t columns = getAccumulatorColumns(t);
  if (promotesBlockPairs(p, t))
    return {{columns}, 2, /*blockPairs=*/true};
  if (hasColumnWaves(p, t))
    return {SmallVector<int64_t>(columns / kColumnWave, kColumnWave), 1};
  SmallVector<int64_t> parts;
  if (t.promotionParts == 1)
    parts = {columns};
  else if (getNumWaves(t) > 1)
    parts = getWavePromotionParts(columns);
  else
    parts = getPromotionParts(columns);
  int64_t partials = static_cast<int64_t>(parts.size());
  return {std::move(parts), partials};
}

//===- GemmScheduler.h - Tile scheduling shared by the GEMMs ----*- C++ -*-===//
//
// What the targets' GEMM kernels share in deciding which tiles a CTA
// computes and how large they are (CUTLASS's tile scheduler): the
// persistent grouped raster order, and the pieces of the tiling heuristics
// both targets use (the tile N candidates, the pipeline depth that fits).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_KERNELSKELETON_GEMMSCHEDULER_H
#define FP8_CONVERSION_KERNELSKELETON_GEMMSCHEDULER_H

#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"

namespace mlir::fp8 {

/// Most pipeline stages a GEMM kernel's heuristic picks.
inline constexpr int64_t kMaxPipelineStages = 8;

/// Stages of `bytesPerStage` each that fit in `availableBytes`, at most
/// kMaxPipelineStages.
int64_t fitPipelineStages(int64_t availableBytes, int64_t bytesPerStage);

/// The tile N of the heuristics' candidates {256, 224, 192, 160, 128} that
/// is a multiple of `multipleOf` and pads `n` least (ties to the larger:
/// fewer re-reads of A); 0 when none is.
int64_t pickLeastPaddedTileN(int64_t n, int64_t multipleOf);

/// Persistent tile scheduler: CTAs stride over the linear tile index;
/// tiles are visited in groups of `rasterGroup` tile rows so that CTAs
/// running together share operand tiles in L2.
struct TileCoordinate {
  Value mTile;
  Value nTile;
  /// A grouped GEMM's: the group (expert) of the tile's rows, from the
  /// `group_index` operand (emitGroupOfTile; m_masked: emitMaskedTile);
  /// null for a dense GEMM.
  Value group;
  /// m_masked only: the valid rows of the tile's group (at most M).
  Value groupRows;
};
TileCoordinate emitGroupedTileCoordinate(KernelBuilder &kb, Value linearTile,
                                         Value numMTiles, int64_t numNTiles,
                                         int64_t rasterGroup);

/// Group scheduling of an m_contiguous grouped GEMM: the group (i32) of
/// tile row `mTile`, read from `groupIndex` (the i32 group of each row of
/// A) at the tile's first row. Groups start at multiples of
/// kGroupRowAlignment rows (a multiple of tile M), so one load per tile
/// tells the group of all its rows. The raster order walks a band of
/// `rasterGroup` tile rows (within one group, for groups of at least that
/// many tiles) across all tile columns, so that the CTAs running together
/// read one group's weight [N, K] from L2.
Value emitGroupOfTile(KernelBuilder &kb, Value groupIndex, Value mTile,
                      int64_t tileM);

/// Group scheduling of an m_masked grouped GEMM: tile row `mTile` of the
/// G groups' ceil(M / tileM) tile rows each becomes the tile row within its
/// group (`coord.mTile`), and `coord.group` the group if the tile has a
/// valid row (its first row is below the group's count, read from
/// `maskedM`, the i32 valid rows of each group), else -1: tiles wholly past
/// the count are skipped like m_contiguous padding, whatever the count.
/// `coord.groupRows` is the group's count clamped to [.., M].
void emitMaskedTile(KernelBuilder &kb, Value maskedM, Value m, int64_t tileM,
                    TileCoordinate &coord);

/// Whether `group` names one of `numGroups` groups (unsigned compare: the
/// padding rows' -1 is not one): tiles of other groups are skipped, neither
/// loaded nor stored.
Value emitIsGroupInRange(KernelBuilder &kb, Value group, int64_t numGroups);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_KERNELSKELETON_GEMMSCHEDULER_H

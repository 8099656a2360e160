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

#include "FP8/Conversion/KernelSkeleton/GemmKernel.h"
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
  /// `group_index` operand (emitGroupOfTile; m_masked:
  /// emitMaskedTileOfUnit);
  /// null for a dense GEMM.
  Value group;
  /// m_masked only: the valid rows of the tile's group (at most M).
  Value groupRows;
  /// k_grouped only: the tile's K blocks [kBlockBegin, kBlockEnd), its
  /// group's columns.
  Value kBlockBegin, kBlockEnd;
};
TileCoordinate emitGroupedTileCoordinate(KernelBuilder &kb, Value linearTile,
                                         Value numMTiles, int64_t numNTiles,
                                         int64_t rasterGroup);

/// Group scheduling of an m_contiguous grouped GEMM: the group (i32) of
/// tile row `mTile`, read from `groupIndex` (the i32 group of each row of
/// A) at the first row of the tile's kGroupRowAlignment-row block (tile M
/// divides it). Groups start at multiples of kGroupRowAlignment rows and a
/// group's last block is the group's in all its rows (padding rows, -1,
/// included), so one load per tile tells the group of all its rows. The
/// raster order walks a band of `rasterGroup` tile rows (within one group,
/// for groups of at least that many tiles) across all tile columns, so that
/// the CTAs running together read one group's weight [N, K] from L2.
Value emitGroupOfTile(KernelBuilder &kb, Value groupIndex, Value mTile,
                      int64_t tileM);

/// Group scheduling of an m_masked grouped GEMM (decode: G groups of M
/// rows, of which a run-time count is valid, read from `maskedM`, the i32
/// count of each group, clamped to [0, M]). The persistent loop walks only
/// the units that hold valid rows: group g has ceil(rows_g / unitRows) unit
/// rows of `numNUnits` units each (unitRows = tile M times the cluster's
/// rows), numbered group after group. The launch shape does not depend on
/// the counts (CUDA-graph capturable); each CTA reads them at its start for
/// the loop's bound (emitMaskedUnitCount) and again, from L1, per unit for
/// its coordinate (emitMaskedTileOfUnit), rather than holding G values in
/// registers across the mainloop.
Value emitMaskedUnitCount(KernelBuilder &kb, Value maskedM, Value m,
                          int64_t numGroups, int64_t unitRows,
                          int64_t numNUnits);

/// The coordinate of valid unit `unit` (< emitMaskedUnitCount): its group
/// (`coord.group`), unit row within the group (`coord.mTile`), unit column
/// (`coord.nTile`) and the group's valid rows (`coord.groupRows`). A
/// group's units go down its unit rows first, so that the CTAs running
/// together read each B tile of the group's weight once from HBM.
TileCoordinate emitMaskedTileOfUnit(KernelBuilder &kb, Value maskedM, Value m,
                                    int64_t numGroups, int64_t unitRows,
                                    int64_t numNUnits, Value unit);

/// Group scheduling of a k_grouped GEMM: tile row `mTile` of the G groups'
/// ceil(M / tileM) tile rows each becomes the tile row within its group
/// (`coord.mTile`), `coord.group` its group, and `coord.kBlockBegin` /
/// `kBlockEnd` the group's columns [off_g, off_g + K_g) in blocks of
/// `tileK`: off_g is the sum of the sizes before it, read from `kSizes`
/// (i32 [G], one load per group before it: no host work per group), a
/// negative size counting as 0 and the columns clamped to `k`.
void emitKGroupedTile(KernelBuilder &kb, Value kSizes, Value m, Value k,
                      int64_t tileM, int64_t tileK, TileCoordinate &coord);

/// Whether `group` names one of `numGroups` groups (unsigned compare: the
/// padding rows' -1 is not one): tiles of other groups are skipped, neither
/// loaded nor stored.
Value emitIsGroupInRange(KernelBuilder &kb, Value group, int64_t numGroups);

//===----------------------------------------------------------------------===//
// Group scheduling of grouped GEMMs (every target)
//===----------------------------------------------------------------------===//
//
// A grouped GEMM's kernel walks the same persistent raster order as a dense
// one over the tiles of the whole problem; each target's roles ask these
// functions which group a tile belongs to (a switch over
// GemmProblem::groupLayout), skip tiles of no group, and address the
// group's weight and scales with offsets from the group (B is one
// [G * N, K] tensor map; no host work per group).

/// Sets `coord.group` to the group (i32) of the tile at tile row
/// `coord.mTile`, by the problem's layout; tiles of no group get a value
/// emitIsGroupInRange rejects. m_contiguous: emitGroupOfTile (`groups` the
/// group of each row). (m_masked kernels walk other units:
/// emitMaskedTileOfUnit; sm_90a k_grouped kernels map their tiles with
/// emitKGroupedTile.)
void emitTileGroup(KernelBuilder &kb, const GemmProblem &p, Value groups,
                   int64_t tileM, TileCoordinate &coord);

/// The row of B's stacked [G * N, K] view that holds row `nOffset` of
/// `group`'s weight (k_grouped: `nOffset`, B being one [N, K] for all
/// groups).
Value emitGroupBRow(KernelBuilder &kb, const GemmProblem &p, Value group,
                    Value nOffset);

/// `group`'s B scales when the kernel reads them through a pointer
/// (per-tensor, per-row, sm_90a blockwise f32): `bScaleInv` advanced by
/// GemmProblem::getBScaleElementsPerGroup f32 elements per group (none for
/// k_grouped 1x128 scales, which cover all groups' columns).
Value emitGroupBScales(KernelBuilder &kb, const GemmProblem &p, Value bScaleInv,
                       Value group);

/// `group`'s first 128-row scale-factor atom row in the stacked
/// [G * ceil(N/128)] atom rows of a block-scaled B's scales (the outer
/// coordinate of their tensor map).
Value emitGroupBScaleAtomRow(KernelBuilder &kb, const GemmProblem &p,
                             Value group);

/// Runs `body` (returning the next `state`) for a tile of a group
/// (`inGroup`); a tile of no group passes `state` on unchanged.
SmallVector<Value> emitIfTileInGroup(KernelBuilder &kb, Value inGroup,
                                     ValueRange state,
                                     function_ref<SmallVector<Value>()> body);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_KERNELSKELETON_GEMMSCHEDULER_H

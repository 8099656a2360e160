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
};
TileCoordinate emitGroupedTileCoordinate(KernelBuilder &kb, Value linearTile,
                                         Value numMTiles, int64_t numNTiles,
                                         int64_t rasterGroup);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_KERNELSKELETON_GEMMSCHEDULER_H

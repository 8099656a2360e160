//===- HopperScheduler.h - Work of the sm_90a GEMM's CTAs -------*- C++ -*-===//
//
// Which tiles and K blocks each CTA of the persistent sm_90a GEMM computes
// (CUTLASS's tile scheduler): whole units of `clusterM` tiles in grouped
// raster order, then, for a stream-K kernel, its share of the K blocks of
// the last partial wave, and the fixup that adds a split tile's partial
// sums.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOHOPPER_HOPPERSCHEDULER_H
#define FP8_CONVERSION_FP8TOHOPPER_HOPPERSCHEDULER_H

#include "FP8/Conversion/FP8ToHopper/HopperKernel.h"
#include "FP8/Conversion/KernelSkeleton/GemmScheduler.h"

namespace mlir::fp8::hopper {

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

/// The tile of `unit` that this CTA computes (with its group in a grouped
/// GEMM).
TileCoordinate emitTileOfUnit(KernelBuilder &kb, const GemmProblem &p,
                              const GemmTiling &t, const KernelValues &v,
                              Value unit);

/// The end of `segment`'s K blocks: its own, or its first (no blocks) for
/// a grouped GEMM's tile outside every group (padding rows), which the
/// producer then loads nothing for and the consumers skip.
Value emitGroupKEnd(KernelBuilder &kb, const GemmProblem &p,
                    const TileCoordinate &coord, const WorkSegment &segment);

/// The K blocks [begin, end) of `segment` for the tile `coord`: the group's
/// columns (k_grouped), or the segment's own blocks (emitGroupKEnd).
std::pair<Value, Value> emitGroupKRange(KernelBuilder &kb, const GemmProblem &p,
                                        const TileCoordinate &coord,
                                        const WorkSegment &segment);

/// `v` with the B scales of the group of `coord` (a grouped GEMM's; `v`
/// itself when `coord.group` is null). m_masked: also the group's D and A
/// scales, and `m` its valid rows (for the epilogue: the producer's scale
/// copies take `v`'s M).
KernelValues getGroupValues(KernelBuilder &kb, const GemmProblem &p,
                            const KernelValues &v, const TileCoordinate &coord);

/// Calls `body` for the work of this CTA in order: the whole units, then
/// its stream-K segments (each the rest of a tile, or of this CTA's blocks
/// if they end first). `body` gets the segment and the carried values, and
/// returns the next ones. (Stream-K segments first measured slower: their
/// waits for partial sums are not hidden behind other CTAs' whole tiles.)
ValueRange forEachWorkSegment(
    KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
    const KernelValues &v, ValueRange init,
    function_ref<SmallVector<Value>(const WorkSegment &, ValueRange)> body);

/// The tile of the stream-K segment that ended at `iterationAfter`.
StreamKTile getStreamKTileAfter(KernelBuilder &kb, const GemmProblem &p,
                                const GemmTiling &t, const KernelValues &v,
                                Value iterationAfter);

/// Computes the stream-K schedule (KernelValues::dpUnits and streamK*) into
/// shared memory; one thread runs it before the roles start.
void emitStreamKSchedule(KernelBuilder &kb, const GemmProblem &p,
                         const GemmTiling &t, const KernelValues &v);

/// Elements 4g to 4g + 3 of a consumer thread's accumulator `sums` (an LLVM
/// struct of f32) as a vector of 4, and `acc` plus such a vector `chunk`:
/// how partial sums of a split tile travel (emitStreamKFixup,
/// emitSplitKReduction).
Value packAccumulatorChunk(KernelBuilder &kb, Value sums, int64_t g);
Value addAccumulatorChunk(KernelBuilder &kb, Value acc, Value chunk,
                          int64_t g);

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
void emitStreamKFixup(KernelBuilder &kb, const GemmTiling &t,
                      const KernelValues &v, const StreamKTile &tile,
                      Value sums, Value isSignalThread,
                      function_ref<void(Value)> epilogue);

} // namespace mlir::fp8::hopper

#endif // FP8_CONVERSION_FP8TOHOPPER_HOPPERSCHEDULER_H

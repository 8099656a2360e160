//===- HopperStageScales.h - Blockwise scales of a stage --------*- C++ -*-===//
//
// What the consumers of the sm_90a GEMM read from a stage's scale slot (the
// blockwise scales the producer copies beside the stage's tiles,
// HopperMainloop): the per-column scales of 1x128 B tiles, the row and
// column-class scales of 128x128 B tiles, and, for the mainloop that reads
// the next K block's scales during the current block's MMAs, a wait for a
// stage that keeps the wgmma descriptors in uniform registers.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOHOPPER_HOPPERSTAGESCALES_H
#define FP8_CONVERSION_FP8TOHOPPER_HOPPERSTAGESCALES_H

#include "FP8/Conversion/FP8ToHopper/HopperKernel.h"

namespace mlir::fp8::hopper {

/// The per-column f32 scales of a consumer thread's accumulator columns in
/// columns [firstColumn, firstColumn + columns) from the scales at
/// `columnScales` (shared memory, one per column): element 2j + e is the
/// scale of column firstColumn + 8j + colInFragment + e; each even-aligned
/// pair is one 8-byte load.
SmallVector<Value> emitColumnScaleLoads(KernelBuilder &kb, Value columnScales,
                                        Value colInFragment,
                                        int64_t firstColumn, int64_t columns);

/// The scales of the K block in `stage` for a consumer thread with tile row
/// `rowInTile` (128x128 B tiles): its rows' A scales (rows rowInTile and
/// rowInTile + 8), then the B scale of each column class (BScaleClasses).
SmallVector<Value> emitRowAndClassScaleLoads(KernelBuilder &kb,
                                             const GemmTiling &t,
                                             const KernelValues &v,
                                             Value rowInTile, Value stage);

/// Blocks until the phase of `barrier` with parity `parity` completed, in a
/// loop that the warp leaves together (each lane's try_wait result voted
/// over the warp). Every lane of the warp must call it.
void emitWarpUniformMBarrierWait(KernelBuilder &kb, Value barrier,
                                 Value parity);

/// If `cond`: waits for the stage of pipeline iteration `iteration`
/// (warp-uniform wait) and reads its emitRowAndClassScaleLoads; otherwise
/// yields `otherwise`.
SmallVector<Value> emitRowAndClassScalesOfIteration(
    KernelBuilder &kb, const GemmTiling &t, const KernelValues &v,
    Value rowInTile, Value cond, Value iteration, ValueRange otherwise);

} // namespace mlir::fp8::hopper

#endif // FP8_CONVERSION_FP8TOHOPPER_HOPPERSTAGESCALES_H

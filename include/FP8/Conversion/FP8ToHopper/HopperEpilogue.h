//===- HopperEpilogue.h - Epilogue of the sm_90a GEMM -----------*- C++ -*-===//
//
// The consumer warpgroups' epilogue of one tile: the remaining scales, bias,
// activation and amax on the wgmma accumulator fragment, then the stores
// (direct, or staged in shared memory for TMA stores).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOHOPPER_HOPPEREPILOGUE_H
#define FP8_CONVERSION_FP8TOHOPPER_HOPPEREPILOGUE_H

#include "FP8/Conversion/FP8ToHopper/HopperKernel.h"

namespace mlir::fp8::hopper {

/// A consumer thread's place in the wgmma accumulator fragment (PTX ISA
/// 9.7.15.5.2, m64nNk32 D: element 4j + 2h + e of a thread is row
/// rowInTile + 8h, column 8j + colInFragment + e of the tile) and the
/// values its epilogue reads on every tile.
struct EpilogueThread {
  Value rowInTile;
  Value colInFragment;
  Value lane;
  /// The first thread of the tile's consumers: it issues the TMA stores.
  Value isStoreThread;
  /// The named barrier of the tile's consumers (`barrierThreads` threads)
  /// and their staging buffer (TMA-store epilogue): the consumers' shared
  /// ones, or with ping-pong the warpgroup's own.
  Value barrierId;
  int64_t barrierThreads = 0;
  Value stagingBuffer;
  /// The per-tensor scales' product (null without per-tensor scales).
  Value tensorScale;
};

/// An output element's f32 value `x` times the non-null `scales`, plus
/// `bias` (if not null), through the problem's activation.
Value emitScaledOutput(KernelBuilder &kb, const GemmProblem &p, Value x,
                       ArrayRef<Value> scales, Value bias);

/// The epilogue of the tile of work unit `unit` on its sums `results`, one
/// accumulator of tile N / 2 f32 per thread for each of the consumer's
/// waves (getNumWaves).
void emitTileEpilogue(KernelBuilder &kb, const GemmProblem &p,
                      const GemmTiling &t, const KernelValues &v,
                      const EpilogueThread &thread, Value unit,
                      ArrayRef<Value> results);

} // namespace mlir::fp8::hopper

#endif // FP8_CONVERSION_FP8TOHOPPER_HOPPEREPILOGUE_H

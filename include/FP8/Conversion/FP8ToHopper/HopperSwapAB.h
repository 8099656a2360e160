//===- HopperSwapAB.h - Swap-AB pieces of the sm_90a GEMM -------*- C++ -*-===//
//
// The swap-AB (decode) form of the sm_90a GEMM (GemmTiling::swapAB): the
// consumer warpgroup computes the transposed tile D^T = B . A^T, the tile's
// 64 rows of B as wgmma's M side and its few rows of A (tokens) as wgmma's
// N (8 or 16 columns). The producer loads A and B as for any tile; what
// differs is which stage tile each wgmma operand reads (emitConsumer), the
// blockwise scales of an accumulator element (here) and the epilogue, which
// stores the transposed fragment (here).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOHOPPER_HOPPERSWAPAB_H
#define FP8_CONVERSION_FP8TOHOPPER_HOPPERSWAPAB_H

#include "FP8/Conversion/FP8ToHopper/HopperEpilogue.h"

namespace mlir::fp8::hopper {

/// Blockwise scales of a swap-AB consumer thread's accumulator elements for
/// the K block whose scale slot is `slot` (the producer's layout: the
/// tile's tileM 1x128 A scales, then the 128x128 B scale of its rows, which
/// lie in one B block). Accumulator element 4j + 2h + e is B row
/// rowInTile + 8h and token column 8j + colInFragment + e, scaled by
/// element 2j + e of the result: the B scale times the token's.
SmallVector<Value> emitSwapABStageScales(KernelBuilder &kb,
                                         const GemmTiling &t, Value slot,
                                         Value colInFragment);

/// The swap-AB epilogue of the tile of work unit `unit` on its sums
/// `result` (tileM / 2 f32 per thread): scales, bias, activation, then
/// direct stores of the transposed fragment, guarded against M and N.
void emitSwapABTileEpilogue(KernelBuilder &kb, const GemmProblem &p,
                            const GemmTiling &t, const KernelValues &v,
                            const EpilogueThread &thread, Value unit,
                            Value result);

/// K-split swap-AB kernels (GemmTiling::splitK): thread 0's initialization
/// of the split-K barriers at `v.splitK` (before the cluster syncs).
void initSplitKBarriers(KernelBuilder &kb, const GemmTiling &t,
                        const KernelValues &v);

/// The K range [kBegin, kEnd) of this CTA's share of a tile's K blocks:
/// rank r of the cluster takes [r kB / S, (r + 1) kB / S).
std::pair<Value, Value> emitSplitKRange(KernelBuilder &kb,
                                        const GemmProblem &p,
                                        const GemmTiling &t,
                                        const KernelValues &v);

/// After this CTA's share of the tile of work unit `unit` (its f32 `sums`,
/// an LLVM struct of the accumulator): a CTA past the first waits until
/// its slot in the first CTA's shared memory is free (read for this CTA's
/// previous tile), stores its sums there and arrives on the first CTA's
/// "stored" barrier; the first CTA waits for all of them, adds their sums
/// to its own in rank order (deterministic), frees their slots and runs
/// `epilogue` on the total. Consumer threads only.
void emitSplitKReduction(KernelBuilder &kb, const GemmTiling &t,
                         const KernelValues &v, Value unit, Value sums,
                         function_ref<void(Value)> epilogue);

} // namespace mlir::fp8::hopper

#endif // FP8_CONVERSION_FP8TOHOPPER_HOPPERSWAPAB_H

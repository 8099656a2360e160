//===- HopperTiling.h - Tiling heuristic of the sm_90a GEMM -----*- C++ -*-===//
//
// The sm_90a GEMM's tiling: the heuristic and its wave model, the limits a
// tiling must keep (HopperTilingLimits.cpp), the launch variants of a
// dynamic-M kernel, and what the tiling makes of the kernel's shared memory
// and metadata.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOHOPPER_HOPPERTILING_H
#define FP8_CONVERSION_FP8TOHOPPER_HOPPERTILING_H

#include "FP8/Conversion/KernelSkeleton/GemmKernel.h"

namespace mlir::fp8::hopper {

/// Promoted accumulation keeps the K block's partial sums (in the parts of
/// getPromotionParts) and the promoted sums, tile N / 2 registers each per
/// thread: 2 x 96 of the 232 a consumer thread gets.
inline constexpr int64_t kMaxPromotedTileN = 192;
/// A wider promoted tile (128x256: the transpose of DeepGEMM's 256x128)
/// computes its columns in waves of 128, one group each, through a single
/// partial accumulator: 128 promoted and 64 partial registers per thread.
/// A wave's promotion overlaps the other consumer's MMAs only, as in the
/// 256-row tile with one part.
inline constexpr int64_t kColumnWaveTileN = 256;
inline constexpr int64_t kColumnWave = 128;
/// The tile of two 64-row waves per consumer (DeepGEMM's 256x128): the
/// waves' promoted sums and one set of partial sums, 2 x 64 + 64 registers
/// per thread at tile N 128.
inline constexpr int64_t kWaveTileM = 256;
inline constexpr int64_t kMaxWaveTileN = 128;

/// The most CTAs a K-split cluster takes (GemmTiling::splitK; the
/// portable cluster size).
inline constexpr int64_t kMaxSplitK = 8;

/// The documented heuristic, or `config` when the IR sets one (checked
/// against what the kernel supports; failures are reported on `op`):
/// - tile M 128 (two consumer warpgroups of 64 rows), tile K 128;
/// - promoted accumulation keeps two f32 accumulators per thread, so tile N
///   is 192 or 128 (a wave cost model over the target's SMs); otherwise the
///   N in {256, 224, 192, 160, 128} that pads N least (ties to the larger:
///   fewer B re-reads);
/// - as many pipeline stages as fit in the target's shared memory per
///   block, at most 8;
/// - no cluster, raster groups of 8 tile rows;
/// - a static M takes the tiling the runtime would launch for it among the
///   launch variants' (selectLaunchVariants) without a workspace, by the
///   same cost model.
FailureOr<GemmTiling> selectGemmTiling(Operation *op,
                                       const GemmProblem &problem,
                                       GemmConfigAttr config,
                                       const TargetInfo &target);

/// Relative throughput of a tile in percent (output elements per SM and
/// second at large M, the 128-row tiles of N >= 192 being 100; the fast
/// 128x192 tile 101, so that it takes ties with the 128x256 one), measured
/// on an H200 (bench/NOTES.md, session 4) and an H100 (session 7): the
/// launch-variant cost model's rate. A wave-filling tile (a width off the
/// 64-column steps that covers N in one tile per SM of `numSMs`) takes its
/// own.
int64_t getTileThroughput(const GemmProblem &problem, const GemmTiling &tiling,
                          int64_t numSMs);

/// The launch variants of a kernel whose M is a run-time value (no `config`,
/// dynamic M): the same GEMM with tiles 128x128, 128x64, 64x128 and 64x64
/// (those `primary` is not), 128x144 and 64x144 where they cover N in fewer
/// tile columns, 128- and 64-row tiles of the width that covers N in one
/// tile per SM (wave-filling), and 128x192 for a fast kernel with a wider
/// tile, each with the heuristic's stages; last, a 64x64 stream-K kernel
/// where N is at most 32 x SMs and K at least 32 blocks (no activation, no
/// output amax), and swap-AB 16x64 and 32x64 stream-K kernels with their
/// K-split forms for decode (M <= 32; no C, output amax, FP8 D or 1x128 B
/// scales). The runtime launches the kernel
/// among the primary and its variants with the fewest waves(M) x tile
/// elements / throughput (runtime/README.md; a stream-K kernel counts the
/// fraction of a wave its tiles fill when M is one row of them on at most
/// half the SMs), so that small M keeps the SMs busy.
SmallVector<GemmTiling> selectLaunchVariants(const GemmProblem &problem,
                                             const GemmTiling &primary,
                                             GemmConfigAttr config,
                                             const TargetInfo &target);

/// Why the sm_90a kernel cannot take `tiling` for `problem` on `target`
/// (tile shape, promotion, scales, cluster, shared memory), in the user's
/// terms, or "" if it can.
std::string getTilingError(const GemmProblem &problem, const GemmTiling &tiling,
                           const TargetInfo &target);

/// Dynamic shared memory of the kernel for `tiling`.
int64_t getDynamicSharedMemoryBytes(const GemmTiling &tiling);

/// The kernel's metadata: buildGemmKernelMetadata's with the CTA of one
/// producer and tileM/64 consumer warpgroups, the whole tile per CTA and
/// the shared memory of `tiling`.
md::KernelMetadata buildKernelMetadata(StringRef name, const ChipInfo &chip,
                                       const GemmProblem &problem,
                                       const GemmTiling &tiling);

/// How a consumer of promoted accumulation splits a K block's MMAs: the
/// column parts of each 64-row wave, issued and promoted in this order, and
/// the partial accumulators they take in turn (part q of the chain of
/// (wave, part) groups uses accumulator q % partials). With `blockPairs`
/// the K loop runs two blocks a trip, each over the whole tile width into
/// one of two partial accumulators, the second block's MMAs issued before
/// the first block is promoted.
struct PromotionPlan {
  SmallVector<int64_t> parts;
  int64_t partials = 1;
  bool blockPairs = false;
};
PromotionPlan getPromotionPlan(const GemmProblem &problem,
                               const GemmTiling &tiling);
/// Whether a promoted tile's K blocks run in pairs (PromotionPlan): a
/// 64-row tile (one consumer warpgroup of one wave) is chosen where M is
/// small and its few CTAs must each stream B at the memory's pace, but one
/// block at a time idles its tensor cores while each block is promoted
/// (H200, M = 64 at 4096x14336: 25.8 us promoted against 19.1 us with fast
/// accumulation; bench/NOTES.md, "Mid-M shapes on the H200"); the one-wave
/// 128-row tiles up to 128 columns with per-tensor scales likewise; a
/// grouped GEMM's empty K loop runs no trip. Not for an f32 output (the
/// unrolled trips spilled beside it).
bool promotesBlockPairs(const GemmProblem &problem, const GemmTiling &tiling);
/// Whether `problem`'s promoted accumulation computes `tiling`'s columns in
/// waves of 128 through one partial accumulator (tile N 256).
bool hasColumnWaves(const GemmProblem &problem, const GemmTiling &tiling);

} // namespace mlir::fp8::hopper

#endif // FP8_CONVERSION_FP8TOHOPPER_HOPPERTILING_H

//===- HopperTilingLimits.cpp - What the sm_90a GEMM kernel can take ------===//
//
// The check of a tiling against the sm_90a kernel's limits: tile shapes of
// whole consumer warpgroups, the registers of promoted accumulation, the B
// scales a blockwise tile reads, clusters and shared memory. Configured
// tilings are reported to the user with it; the heuristic's candidates and
// launch variants pass it.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToHopper/HopperKernel.h"
#include "FP8/Conversion/FP8ToHopper/HopperTiling.h"

#include "llvm/Support/raw_ostream.h"

#include <numeric>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::hopper;

/// A ping-pong consumer holds its whole tile's sums: at most as many f32
/// registers per thread as a 64x256 or 128x128 tile (the cooperative
/// 128x256 tile's). With 192 (128x192) ptxas serialized the wgmmas of
/// some kernels (C7520, a compiler-inserted warpgroup arrive on a
/// divergent path), which then ran 0.62-0.74x as fast (bench/NOTES.md,
/// "Ping-pong").
static constexpr int64_t kMaxPingPongAccumulators = 128;

std::string hopper::getTilingError(const GemmProblem &p, const GemmTiling &t,
                                   const TargetInfo &target) {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (t.swapAB && (t.tileM % 8 != 0 || t.tileM > 32 || t.tileN != 64 ||
                   getClusterSize(t) != 1 || t.tmaStoreEpilogue))
    os << "the sm_90a swap-AB kernels take tiles of 8, 16, 24 or 32 x 64 "
          "(64 B rows as the MMA's M, the tile's M as its N), no cluster and "
          "direct stores, got "
       << t.tileM << "x" << t.tileN;
  else if (t.splitK > 1 && (!t.swapAB || t.streamK || t.splitK > kMaxSplitK ||
                            t.splitK > p.numKBlocks(t.tileK) || p.isGrouped()))
    os << "a K split over a cluster takes a swap-AB tile without stream-K, "
          "at most "
       << kMaxSplitK << " CTAs and at most one per K block, not grouped; got "
       << t.splitK << " CTAs for " << p.numKBlocks(t.tileK) << " K blocks";
  else if (!t.swapAB && t.tileM != 64 && t.tileM != 128 &&
           t.tileM != kWaveTileM)
    os << "the sm_90a kernels take tile M 64 or 128 (one or two consumer "
          "warpgroups) or "
       << kWaveTileM << " (two consumer warpgroups of two 64-row waves), got "
       << t.tileM;
  else if (t.tileM == kWaveTileM &&
           (p.hasBlockwiseColumnScales() || t.tileN > kMaxWaveTileN))
    os << "a " << kWaveTileM
       << "-row tile keeps the sums of two 64-row waves per consumer "
          "thread: it takes 128x128 or coarser B scales and tile N <= "
       << kMaxWaveTileN << ", got "
       << (p.hasBlockwiseColumnScales() ? "1x128 B scales"
                                        : "tile N " + std::to_string(t.tileN));
  else if (t.tileM == kWaveTileM && (t.streamK || p.isGrouped()))
    os << "a " << kWaveTileM
       << "-row tile takes neither stream-K nor a grouped GEMM";
  else if (t.pingPong &&
           (p.promoteInterval != 0 || t.swapAB || t.streamK || t.splitK > 1 ||
            p.isGrouped() || t.tileM > 128 ||
            t.tileM / 64 * t.tileN / 2 > kMaxPingPongAccumulators))
    os << "ping_pong gives each consumer warpgroup whole tiles of its own: it "
          "takes fast accumulation, a tile of 64 or 128 rows whose sums fit "
          "in "
       << kMaxPingPongAccumulators << " registers per thread (tile M x N <= "
       << kWarpgroupThreads * kMaxPingPongAccumulators
       << "), neither stream-K nor a grouped GEMM; got "
       << (p.promoteInterval != 0 ? "promoted accumulation"
           : p.isGrouped()        ? "a grouped GEMM"
           : t.streamK            ? "stream-K"
                                  : "tile " + std::to_string(t.tileM) + "x" +
                             std::to_string(t.tileN));
  else if (t.promotionParts != 0 && (p.promoteInterval == 0 || t.swapAB))
    os << "promotion_parts selects the column parts of promoted "
          "accumulation in a 64-, 128- or "
       << kWaveTileM << "-row tile, got "
       << (p.promoteInterval == 0 ? "fast accumulation" : "a swap-AB tile");
  else if (t.promotionParts == 2 && t.tileN < 64)
    os << "two promotion parts need tile N >= 64 (parts of whole 32-column "
          "MMAs), got "
       << t.tileN;
  else if (p.isBlockwise() && !p.hasBlockwiseColumnScales() &&
           t.tileN > kScaleBlock + std::gcd(t.tileN, kScaleBlock))
    os << "the sm_90a blockwise kernels take the 128x128 B scales of at most "
          "two B blocks per tile: expected tile N <= 128 + gcd(tile N, 128), "
          "got "
       << t.tileN;
  else if (p.promoteInterval != 0 && t.tileN > kMaxPromotedTileN &&
           (t.tileN != kColumnWaveTileN || t.tileM > 128 ||
            p.hasBlockwiseColumnScales() || t.promotionParts == 2))
    os << "promoted accumulation keeps two f32 accumulators of tile N / 2 "
          "registers per thread: expected tile N <= "
       << kMaxPromotedTileN << ", or " << kColumnWaveTileN << " in waves of "
       << kColumnWave
       << " columns (tile M 64 or 128, one promotion part, 128x128 or "
          "coarser B scales), got "
       << t.tileM << "x" << t.tileN
       << (p.hasBlockwiseColumnScales() ? " with 1x128 B scales"
           : t.promotionParts == 2      ? " in two promotion parts"
                                        : "");
  else if (p.outQuantization == OutputQuantization::Block1x128 &&
           t.tileN % kScaleBlock != 0)
    os << "an FP8 result in 1x" << kScaleBlock
       << " blocks along N takes whole blocks per tile: expected tile N a "
          "multiple of "
       << kScaleBlock << ", got " << t.tileN;
  else if (getClusterSize(t) > 2)
    os << "the sm_90a kernels take clusters of 1x1, 2x1 (two M tiles "
          "sharing a multicast B tile) or 1x2 (two N tiles sharing a "
          "multicast A tile), got "
       << t.clusterM << "x" << t.clusterN;
  else if (t.clusterN == 2 && (p.hasBlockwiseColumnScales() || p.isKGrouped()))
    os << "a 1x2 cluster (A multicast) takes neither 1x128 B scales nor a "
          "k_grouped GEMM";
  else if (t.clusterM == 2 && (t.tileN / 2) % 8 != 0)
    os << "a 2x1 cluster splits the B tile in halves of whole 8-row core "
          "matrices: expected tile N a multiple of 16, got "
       << t.tileN;
  else if (t.stages < 1)
    os << "not one pipeline stage of a " << t.tileM << "x" << t.tileN
       << " tile fits in the " << target.maxSharedMemoryPerBlock
       << " bytes of shared memory of the target (max_shared_memory_per_block "
          "of #fp8.target): raise it or configure a smaller tile";
  else if (int64_t smem = getDynamicSharedMemoryBytes(t);
           smem > target.maxSharedMemoryPerBlock)
    os << "the kernel configuration needs " << smem
       << " bytes of shared memory, more than the "
       << target.maxSharedMemoryPerBlock << " " << target.chip.name
       << " offers: use fewer stages or a smaller tile";
  return message;
}

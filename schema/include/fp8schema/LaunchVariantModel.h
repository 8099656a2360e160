//===- LaunchVariantModel.h - Cost of a GEMM launch variant ----*- C++ -*-===//
//
// The launch-variant model that the compiler and the runtime both apply:
// the runtime picks a GEMM's launch variant per call (selectLaunchVariant),
// and fp8-compile picks the same way for a static M (launchCost over the
// launch variants' tiles and the swap-AB tiles). Both count in waves of the
// GPU's SMs.
//
//===----------------------------------------------------------------------===//

#ifndef FP8SCHEMA_LAUNCHVARIANTMODEL_H
#define FP8SCHEMA_LAUNCHVARIANTMODEL_H

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace fp8schema {

/// What a stream-K kernel's fixup through the workspace costs, in waves,
/// per CTA sharing a split tile: the CTA computing its first K blocks waits
/// for each other CTA's f32 sums in turn (two round trips through L2 each,
/// after its own blocks). Against a K-split kernel, whose sums go through
/// the cluster's shared memory.
constexpr double kStreamKFixupWaves = 0.05;

/// The largest share of the SMs that one row of a stream-K kernel's tiles
/// (M at most the tile's) may fill for its split to pay: such a GEMM
/// streams B once and is bound by the bytes the SMs keep in flight, not by
/// MMA time. H100, 64x64 tiles at M = 17-64 against the whole-tile kernel:
/// split, N = 4096 (64 tiles, 0.48 of the SMs) took 1.01-1.22x the time
/// on 20 of 21 shapes blockwise (K = 4096-14336) and 0.90-1.14x fast
/// (longer on 17 of 21); N = 2048-3072 (32-48 tiles) 0.86-1.02x blockwise
/// (bench/NOTES.md). Several rows share B tiles and split up to half the
/// SMs (kStreamKRowsShare).
constexpr double kStreamKOneRowShare = 0.4;
constexpr double kStreamKRowsShare = 0.5;

/// The largest share of the SMs that all the CTAs of a K-split swap-AB
/// kernel may fill for it to run more than one row of its tiles (each row
/// streams all of B again, which pays only while it puts CTAs on idle SMs).
/// Fitted on an H200 (bench/NOTES.md, "Swap-AB with 32 tokens"): it moves
/// N = 512 and 576 at M = 17-64 only (1.02-1.17x), and 0.6 to 0.7 make the
/// same picks there.
constexpr double kSwapABRowsShare = 0.6;

/// Whether a stream-K kernel's `tiles` (one row of them, M at most the
/// tile's, or several) fill few enough of its `ctas` for its split to pay:
/// the runtime's choice among launch variants, and the compiler's rule for
/// building the 64x64 stream-K variant (one row).
inline bool streamKSplitPays(double tiles, double ctas, bool oneTileRow) {
  return tiles <= (oneTileRow ? kStreamKOneRowShare : kStreamKRowsShare) * ctas;
}

/// The CTAs a persistent grid of clusters of `clusterWidth` CTAs runs at
/// once on `numSMs` SMs, one per SM: the SMs rounded down to a whole number
/// of clusters, at least one cluster (the runtime's grid cap).
inline int64_t persistentCtas(int64_t clusterWidth, int64_t numSMs) {
  int64_t width = std::max<int64_t>(clusterWidth, 1);
  return std::max(numSMs / width * width, width);
}

/// The GPCs a cluster's CTAs must share one of (H100, H200: 8).
constexpr int64_t kGpcs = 8;

/// Clusters of `size` CTAs (one per SM) resident at once on `numSMs` SMs: a
/// cluster runs within one GPC, so each GPC holds floor(its SMs / size) of
/// them (H100: 32 clusters of 4 on 132 SMs; measured: 33 took 1.5x the time
/// of 32). GPC sizes differ from die to die (an H200's driver counts 30), so
/// the runtime asks the driver (cuOccupancyMaxActiveClusters) and takes this
/// where it cannot, as the compiler's static-M choice does.
inline int64_t residentClusters(int64_t size, int64_t numSMs) {
  return std::max<int64_t>(numSMs / kGpcs / size, 1) * kGpcs;
}

/// The waves of a stream-K kernel whose `ctas` CTAs split the K blocks of
/// `tiles` tiles (at most half of `ctas`, or one row of swap-AB tiles): that fraction of a wave plus the fixup,
/// a chain as long as the CTAs sharing a tile.
inline double streamKWaves(double tiles, double ctas) {
  return tiles / ctas + kStreamKFixupWaves * std::max(1.0, ctas / tiles);
}

/// A launch variant as the model sees it: the fields of a GEMM kernel's
/// metadata (grid, cluster, workspace, gemm.swap_ab) that its cost reads.
struct LaunchShape {
  int64_t tileM = 0, tileN = 0;
  /// Output elements per SM and second, in percent of the fastest tile.
  int64_t throughput = 100;
  /// CTAs per cluster along the grid (a persistent grid is a multiple).
  int64_t clusterWidth = 1;
  /// CTAs per tile, splitting its K blocks over a cluster.
  int64_t kSplit = 1;
  /// Splits K blocks over all its CTAs through a workspace.
  bool streamK = false;
  /// Tiles of 16 or 32 tokens by 64 B rows (D^T = B A^T).
  bool swapAB = false;
};

/// The cost of launching `shape` for an M x N problem on `numSMs` SMs, in
/// waves times tile elements over throughput, the least wins (ties to the
/// earlier candidate); `resident` clusters of kSplit CTAs run at once (0:
/// residentClusters's count). Returns a negative cost where `shape` is no
/// candidate: a swap-AB kernel runs one row of its tiles, or, split along
/// K, several where all its CTAs fill at most kSwapABRowsShare of the SMs
/// (each further row streams all of B again, which pays only while it adds
/// CTAs to idle SMs; H200, M = 24 and 32: the 32-token tile 1.17-1.44x two
/// rows of 16 at N = 2112 to 8192, two rows of 16 split over clusters of 4
/// 1.02-1.12x one row of 32 at N = 512 and 576; bench/NOTES.md, "Swap-AB
/// with 32 tokens").
inline double launchCost(const LaunchShape &shape, int64_t m, int64_t n,
                         int64_t numSMs, int64_t resident = 0) {
  int64_t rows = (m + shape.tileM - 1) / shape.tileM;
  bool oneTileRow = rows == 1;
  double tiles = static_cast<double>(rows) *
                 static_cast<double>((n + shape.tileN - 1) / shape.tileN);
  double sms = static_cast<double>(numSMs);
  if (shape.swapAB && !oneTileRow &&
      !(shape.kSplit > 1 &&
        tiles * static_cast<double>(shape.kSplit) <= kSwapABRowsShare * sms))
    return -1;
  double ctas = static_cast<double>(persistentCtas(shape.clusterWidth, numSMs));
  double waves = std::ceil(tiles / ctas);
  // A stream-K kernel splits the K blocks of its tiles over all its CTAs:
  // where the tiles fill at most half of them (for a swap-AB kernel, whose
  // schedule splits whenever that shortens the last wave, any number of
  // tiles in one row of them), its time is that fraction of a wave
  // (measured at M = 1 to 256; bench/NOTES.md), plus the fixup through the
  // workspace. One row of tiles streams B once and is bound by the bytes in
  // flight, not by MMA time: there the split pays only from 2.5 CTAs a tile
  // (streamKSplitPays). Otherwise it counts whole waves like any other.
  if (shape.streamK &&
      (streamKSplitPays(tiles, ctas, oneTileRow) || shape.swapAB))
    waves = streamKWaves(tiles, ctas);
  // A K-split kernel: waves of tiles over its resident clusters, each CTA
  // running 1 / kSplit of a tile's K blocks.
  if (shape.kSplit > 1) {
    int64_t clusters =
        resident > 0 ? resident : residentClusters(shape.kSplit, numSMs);
    waves = std::ceil(tiles / static_cast<double>(clusters)) /
            static_cast<double>(shape.kSplit);
  }
  return waves * static_cast<double>(shape.tileM * shape.tileN) /
         static_cast<double>(shape.throughput);
}

} // namespace fp8schema

#endif // FP8SCHEMA_LAUNCHVARIANTMODEL_H

//===- LaunchVariantModelTest.cpp - The launch-variant cost ---------------===//
//
// fp8schema::launchCost is the one cost of a GEMM launch variant: the
// runtime picks the least per call (selectLaunchVariant), fp8-compile for a
// static M (selectGemmTiling).
//
//===----------------------------------------------------------------------===//

#include "fp8schema/LaunchVariantModel.h"

#include <gtest/gtest.h>

using fp8schema::launchCost;
using fp8schema::LaunchShape;

namespace {

LaunchShape tile(int64_t m, int64_t n, int64_t throughput) {
  LaunchShape shape;
  shape.tileM = m;
  shape.tileN = n;
  shape.throughput = throughput;
  return shape;
}

LaunchShape swapAB(int64_t tokens, int64_t throughput, int64_t kSplit = 1) {
  LaunchShape shape = tile(tokens, 64, throughput);
  shape.swapAB = true;
  shape.kSplit = kSplit;
  shape.clusterWidth = kSplit;
  shape.streamK = kSplit == 1;
  return shape;
}

TEST(LaunchVariantModel, WholeTilesCountWaves) {
  // 4096 x 4096 in 128x128 tiles: 1024 tiles, 8 waves of 132 SMs.
  EXPECT_DOUBLE_EQ(launchCost(tile(128, 128, 85), 4096, 4096, 132),
                   8.0 * 128 * 128 / 85);
  // A cluster of 2 keeps its grid a multiple of 2: on 131 SMs, 130 CTAs
  // take 131 tiles (64 x 8384) in two waves, single CTAs in one.
  LaunchShape pair = tile(64, 64, 57);
  EXPECT_DOUBLE_EQ(launchCost(pair, 64, 8384, 131), 4096.0 / 57);
  pair.clusterWidth = 2;
  EXPECT_DOUBLE_EQ(launchCost(pair, 64, 8384, 131), 2 * 4096.0 / 57);
}

TEST(LaunchVariantModel, StreamKSplitsOneRowOfFewTiles) {
  // One row of 9 64x64 tiles (N = 576) on 132 CTAs: 9 / 132 of a wave plus
  // a fixup of 0.05 per CTA sharing a tile.
  LaunchShape streamK = tile(64, 64, 57);
  streamK.streamK = true;
  EXPECT_DOUBLE_EQ(launchCost(streamK, 64, 576, 132),
                   (9.0 / 132 + 0.05 * 132 / 9) * 4096 / 57);
  // 128 tiles (N = 8192) fill more than 0.4 of the SMs: whole waves.
  EXPECT_DOUBLE_EQ(launchCost(streamK, 64, 8192, 132), 4096.0 / 57);
}

TEST(LaunchVariantModel, SwapABRunsOneRowOrASplitOfFewCTAs) {
  // M = 16 at N = 4096: one row of 64 swap-AB tiles, stream-K over 132 CTAs
  // or clusters of 2 (66 resident: one wave at half a tile each).
  EXPECT_DOUBLE_EQ(launchCost(swapAB(16, 16), 16, 4096, 132),
                   (64.0 / 132 + 0.05 * 132 / 64) * 1024 / 16);
  EXPECT_DOUBLE_EQ(launchCost(swapAB(16, 16, 2), 16, 4096, 132),
                   0.5 * 1024 / 16);
  // The driver's count of resident clusters, where given: 30 of 4 on an
  // H200 leave 32 tiles (N = 2048) two waves instead of one.
  EXPECT_DOUBLE_EQ(launchCost(swapAB(16, 16, 4), 1, 2048, 132),
                   0.25 * 1024 / 16);
  EXPECT_DOUBLE_EQ(launchCost(swapAB(16, 16, 4), 1, 2048, 132, 30),
                   0.5 * 1024 / 16);
  // M = 17: two rows. Not a candidate but split along K with all its CTAs
  // within 0.6 of the SMs (N = 1024: 2 x 16 tiles x 2 = 64 CTAs, x 4 =
  // 128).
  EXPECT_LT(launchCost(swapAB(16, 16), 17, 1024, 132), 0);
  EXPECT_GT(launchCost(swapAB(16, 16, 2), 17, 1024, 132), 0);
  EXPECT_LT(launchCost(swapAB(16, 16, 4), 17, 1024, 132), 0);
  // The 32-token tile runs M = 17-32 in one row.
  EXPECT_GT(launchCost(swapAB(32, 31), 32, 1024, 132), 0);
  EXPECT_LT(launchCost(swapAB(32, 31), 33, 1024, 132), 0);
}

} // namespace

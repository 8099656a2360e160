//===- ScaleEmulationTest.cpp - MXFP8 scale path vs the numerics reference ===//
//
// Emulates global atom layout -> tcgen05.cp -> TMEM -> scale factor IDs on
// fresh random data (seed printed on failure) and checks every element's
// scale and the GEMM result against fp8::numerics.
//
//===----------------------------------------------------------------------===//

#include "ScaleEmulation.h"

#include "FP8/Numerics/Formats.h"
#include "FP8/Numerics/Reference.h"

#include "llvm/Support/MathExtras.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mlir::fp8::blackwell;
using namespace mlir::fp8::blackwell::emulation;
namespace numerics = ::fp8::numerics;

namespace {

uint64_t freshSeed() {
  std::random_device device;
  return (uint64_t(device()) << 32) | device();
}

/// Normal values whose magnitude changes by up to 2^+-6 from one 32-wide
/// block to the next (so neighbouring MX blocks get different scales), with
/// some all-zero blocks.
std::vector<float> randomMatrix(std::mt19937_64 &rng, int64_t rows,
                                int64_t cols) {
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_int_distribution<int> exponent(-6, 6);
  std::uniform_int_distribution<int> zeroBlock(0, 15);
  std::vector<float> x(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c0 = 0; c0 < cols; c0 += 32) {
      const float scale = std::ldexp(1.f, exponent(rng));
      const bool zero = zeroBlock(rng) == 0;
      for (int64_t c = c0; c < std::min(cols, c0 + 32); ++c)
        x[r * cols + c] = zero ? 0.f : normal(rng) * scale;
    }
  return x;
}


TEST(ScaleEmulation, GlobalAtomImage) {
  // 130 rows x 5 K blocks, value (r * 7 + kb) % 251 + 1 (never 0 = padding).
  const int64_t rows = 130, kBlocks = 5;
  std::vector<uint8_t> grid(size_t(rows * kBlocks));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t kb = 0; kb < kBlocks; ++kb)
      grid[r * kBlocks + kb] = uint8_t((r * 7 + kb) % 251 + 1);
  std::vector<uint8_t> image = layoutScaleFactors(grid.data(), rows, kBlocks);
  // Padded 256 x 8 -> 2 x 2 atoms = 2048 bytes.
  ASSERT_EQ(image.size(), 2048u);
  auto value = [](int64_t r, int64_t kb) { return uint8_t((r * 7 + kb) % 251 + 1); };
  EXPECT_EQ(image[0], value(0, 0));
  EXPECT_EQ(image[16], value(1, 0));    // (1 % 32) * 16
  EXPECT_EQ(image[4], value(32, 0));    // (32 / 32) * 4
  EXPECT_EQ(image[3], value(0, 3));
  EXPECT_EQ(image[512], value(0, 4));   // atom (0, 1)
  EXPECT_EQ(image[1040], value(129, 0)); // atom (1, 0) = 1024, + 1 * 16
  // Padding: kb 5..7 and rows 130..255 hold 0.
  EXPECT_EQ(image[512 + 1], 0);          // (0, 5)
  EXPECT_EQ(image[1024 + 2 * 16], 0);    // (130, 0)
}

TEST(ScaleEmulation, Tcgen05CopyWarpx4) {
  // Shared memory byte at 0x200 + x = x % 251; copy to TMEM column 10.
  std::vector<uint8_t> smem(0x600, 0);
  for (int x = 0; x < 512; ++x)
    smem[0x200 + x] = uint8_t(x % 251);
  std::optional<SharedMemoryDescriptor> source =
      getScaleFactorCopySourceDescriptor(0x200);
  ASSERT_TRUE(source);
  std::optional<uint64_t> bits = encodeSharedMemoryDescriptor(*source);
  ASSERT_TRUE(bits);
  TensorMemoryModel tm;
  ASSERT_TRUE(tm.copy32x128bWarpx4(*tmemAddress(0, 10), *bits, smem));
  // Lane 5, column 10 + 2 = row 5's bytes 8..11 = x 88..91, little-endian
  // 0x5B5A5958; the same in lanes 37, 69 and 101 (.warpx4).
  for (uint32_t lane : {5u, 37u, 69u, 101u})
    EXPECT_EQ(tm.cell(lane, 12), 0x5B5A5958u) << lane;
  // Row 31 word 3: x 508..511 -> 508 % 251 = 6 .. 9 -> 0x09080706.
  EXPECT_EQ(tm.cell(127, 13), 0x09080706u);
  EXPECT_EQ(tm.byte(127, 13, 2), 8);
  EXPECT_EQ(tm.cell(0, 9), 0u); // untouched
  EXPECT_EQ(tm.cell(0, 14), 0u);
  // A lane other than 0 or a swizzled source is rejected.
  EXPECT_FALSE(tm.copy32x128bWarpx4(*tmemAddress(32, 10), *bits, smem));
  EXPECT_FALSE(tm.copy32x128bWarpx4(0, *bits | (2ull << 61), smem));
}

TEST(ScaleEmulation, PowerOfTwoToUe8m0) {
  EXPECT_EQ(powerOfTwoToUe8m0(1.f), std::optional<uint8_t>(127));
  EXPECT_EQ(powerOfTwoToUe8m0(0.25f), std::optional<uint8_t>(125));
  EXPECT_EQ(powerOfTwoToUe8m0(std::ldexp(1.f, 127)), std::optional<uint8_t>(254));
  EXPECT_EQ(powerOfTwoToUe8m0(std::ldexp(1.f, -126)), std::optional<uint8_t>(1));
  EXPECT_EQ(powerOfTwoToUe8m0(std::ldexp(1.f, -127)), std::optional<uint8_t>(0));
  EXPECT_FALSE(powerOfTwoToUe8m0(std::ldexp(1.f, -128)));
  EXPECT_FALSE(powerOfTwoToUe8m0(0.75f));
  EXPECT_FALSE(powerOfTwoToUe8m0(0.f));
  EXPECT_FALSE(powerOfTwoToUe8m0(-1.f));
  EXPECT_FALSE(powerOfTwoToUe8m0(INFINITY));
  EXPECT_FALSE(powerOfTwoToUe8m0(NAN));
}

struct Shape {
  int64_t m, n, k, tileN;
};

// MXFP8 from the reference quantizer: every element's scale as the MMA sees
// it equals the reference's scale, and the emulated GEMM equals
// scaledMatmulReference bit for bit.
TEST(ScaleEmulation, MxGemmMatchesReference) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  std::mt19937_64 rng(seed);
  const Shape shapes[] = {{128, 128, 128, 128},
                          {200, 96, 300, 32},
                          {130, 256, 256, 256},
                          {256, 200, 160, 64},
                          {64, 300, 520, 256}};
  for (const Shape &s : shapes) {
    SCOPED_TRACE(testing::Message() << "M=" << s.m << " N=" << s.n
                                    << " K=" << s.k << " tileN=" << s.tileN);
    for (numerics::Format bFormat :
         {numerics::Format::E4M3, numerics::Format::E5M2}) {
      const std::vector<float> a = randomMatrix(rng, s.m, s.k);
      const std::vector<float> b = randomMatrix(rng, s.n, s.k);
      const numerics::QuantizedTensor qa =
          numerics::quantize(a.data(), s.m, s.k, numerics::Format::E4M3,
                             numerics::Granularity::mx(32), numerics::ScaleRule::mx());
      const numerics::QuantizedTensor qb = numerics::quantize(
          b.data(), s.n, s.k, bFormat, numerics::Granularity::mx(32),
          numerics::ScaleRule::mx());
      const int64_t kBlocks = llvm::divideCeil(s.k, 32);
      ASSERT_EQ(qa.scaleCols, kBlocks);
      const std::vector<uint8_t> aImage =
          layoutScaleFactors(qa.scaleE8m0.data(), s.m, kBlocks);
      const std::vector<uint8_t> bImage =
          layoutScaleFactors(qb.scaleE8m0.data(), s.n, kBlocks);
      std::string error;
      std::optional<EmulatedBlockScaledGemm> gemm = emulateBlockScaledGemm(
          qa.data.data(), qa.format, qb.data.data(), qb.format, s.m, s.n, s.k,
          aImage, bImage, s.tileN, &error);
      ASSERT_TRUE(gemm) << error;
      EXPECT_EQ(gemm->replicaMismatches, 0);

      int64_t aWrong = 0, bWrong = 0;
      for (int64_t r = 0; r < s.m; ++r)
        for (int64_t kk = 0; kk < s.k; ++kk)
          aWrong += gemm->aScaleUsed[r * s.k + kk] !=
                    qa.scaleE8m0[r * kBlocks + kk / 32];
      for (int64_t c = 0; c < s.n; ++c)
        for (int64_t kk = 0; kk < s.k; ++kk)
          bWrong += gemm->bScaleUsed[c * s.k + kk] !=
                    qb.scaleE8m0[c * kBlocks + kk / 32];
      EXPECT_EQ(aWrong, 0);
      EXPECT_EQ(bWrong, 0);

      const std::vector<double> reference = numerics::scaledMatmulReference(
          qa, numerics::Major::K, qb, numerics::Major::K, nullptr, nullptr);
      int64_t outWrong = 0;
      for (size_t i = 0; i < reference.size(); ++i)
        outWrong += gemm->out[i] != reference[i];
      EXPECT_EQ(outWrong, 0);
    }
  }
}

// The check can fail: swapping the atom bytes of rows 31 and 32 (the
// lane-31 / column-1 corner) makes rows 31 and 32 read each other's scales.
TEST(ScaleEmulation, DetectsCorruptedAtom) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  std::mt19937_64 rng(seed);
  const int64_t m = 128, n = 32, k = 128, kBlocks = 4;
  std::vector<uint8_t> aScales(size_t(m * kBlocks)), bScales(size_t(n * kBlocks));
  std::uniform_int_distribution<int> code(100, 150);
  for (uint8_t &s : aScales)
    s = uint8_t(code(rng));
  for (uint8_t &s : bScales)
    s = uint8_t(code(rng));
  aScales[31 * kBlocks + 0] = 110; // make rows 31 and 32 differ in kb 0
  aScales[32 * kBlocks + 0] = 140;
  std::vector<uint8_t> aImage = layoutScaleFactors(aScales.data(), m, kBlocks);
  const std::vector<uint8_t> bImage =
      layoutScaleFactors(bScales.data(), n, kBlocks);
  std::swap(aImage[31 * 16 + 0], aImage[0 * 16 + 4]); // (31,0) <-> (32,0)
  const std::vector<uint8_t> data(size_t(m * k), 0x38); // 1.0 in E4M3
  const std::vector<uint8_t> bData(size_t(n * k), 0x38);
  std::optional<EmulatedBlockScaledGemm> gemm = emulateBlockScaledGemm(
      data.data(), numerics::Format::E4M3, bData.data(), numerics::Format::E4M3,
      m, n, k, aImage, bImage, 32);
  ASSERT_TRUE(gemm);
  EXPECT_EQ(gemm->aScaleUsed[31 * k + 0], 140);
  EXPECT_EQ(gemm->aScaleUsed[32 * k + 0], 110);
  EXPECT_EQ(gemm->aScaleUsed[31 * k + 32], aScales[31 * kBlocks + 1]);
}

// Blockwise (DeepSeek-V3) power-of-two scales run on the block-scaled MMA
// unchanged: 1x128 activations -> four identical UE8M0 per 128-K block,
// 128x128 weights -> broadcast to 128 rows x 4; the emulated GEMM on the
// unchanged FP8 data reproduces scaledMatmulReference exactly.
TEST(ScaleEmulation, BlockwiseToMxGemmMatchesReference) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  std::mt19937_64 rng(seed);
  const Shape shapes[] = {{128, 128, 256, 128},
                          {200, 160, 300, 32},
                          {256, 256, 384, 256}};
  for (const Shape &s : shapes) {
    SCOPED_TRACE(testing::Message() << "M=" << s.m << " N=" << s.n
                                    << " K=" << s.k);
    const std::vector<float> a = randomMatrix(rng, s.m, s.k);
    const std::vector<float> b = randomMatrix(rng, s.n, s.k);
    const numerics::ScaleRule pow2 =
        numerics::ScaleRule::blockwise(numerics::BlockScaleKind::PowerOfTwo);
    const numerics::QuantizedTensor qa =
        numerics::quantize(a.data(), s.m, s.k, numerics::Format::E4M3,
                           numerics::Granularity::tile(1, 128), pow2);
    const numerics::QuantizedTensor qb =
        numerics::quantize(b.data(), s.n, s.k, numerics::Format::E4M3,
                           numerics::Granularity::tile(128, 128), pow2);
    std::string error;
    std::optional<std::vector<uint8_t>> aMx = blockwiseScalesToMx(qa, &error);
    ASSERT_TRUE(aMx) << error;
    std::optional<std::vector<uint8_t>> bMx = blockwiseScalesToMx(qb, &error);
    ASSERT_TRUE(bMx) << error;
    const int64_t kBlocks = llvm::divideCeil(s.k, 32);
    // Structure of the mapping: the 4 blocks of a 128-K tile agree; B rows
    // of one 128-row tile agree.
    for (int64_t r = 0; r < s.m; ++r)
      for (int64_t kb = 0; kb < kBlocks; ++kb)
        ASSERT_EQ((*aMx)[r * kBlocks + kb], (*aMx)[r * kBlocks + kb / 4 * 4]);
    for (int64_t r = 0; r < s.n; ++r)
      for (int64_t kb = 0; kb < kBlocks; ++kb)
        ASSERT_EQ((*bMx)[r * kBlocks + kb], (*bMx)[(r / 128 * 128) * kBlocks + kb]);

    std::optional<EmulatedBlockScaledGemm> gemm = emulateBlockScaledGemm(
        qa.data.data(), qa.format, qb.data.data(), qb.format, s.m, s.n, s.k,
        layoutScaleFactors(aMx->data(), s.m, kBlocks),
        layoutScaleFactors(bMx->data(), s.n, kBlocks), s.tileN, &error);
    ASSERT_TRUE(gemm) << error;
    EXPECT_EQ(gemm->replicaMismatches, 0);
    int64_t aWrong = 0, bWrong = 0;
    for (int64_t r = 0; r < s.m; ++r)
      for (int64_t kk = 0; kk < s.k; ++kk)
        aWrong += numerics::decodeUe8m0(gemm->aScaleUsed[r * s.k + kk]) !=
                  qa.scaleInvAt(r, kk);
    for (int64_t c = 0; c < s.n; ++c)
      for (int64_t kk = 0; kk < s.k; ++kk)
        bWrong += numerics::decodeUe8m0(gemm->bScaleUsed[c * s.k + kk]) !=
                  qb.scaleInvAt(c, kk);
    EXPECT_EQ(aWrong, 0);
    EXPECT_EQ(bWrong, 0);

    const std::vector<double> reference = numerics::scaledMatmulReference(
        qa, numerics::Major::K, qb, numerics::Major::K, nullptr, nullptr);
    int64_t outWrong = 0;
    for (size_t i = 0; i < reference.size(); ++i)
      outWrong += gemm->out[i] != reference[i];
    EXPECT_EQ(outWrong, 0);
  }
}

/// A blockwise tensor of random finite FP8 codes and random power-of-two
/// scale_inv values 2^e, e in [-127, 127] (2^-127 is the f32 subnormal that
/// UE8M0 code 0 stands for), one per `tileRows` x 128 tile.
numerics::QuantizedTensor randomPow2Blockwise(std::mt19937_64 &rng,
                                              int64_t rows, int64_t cols,
                                              int64_t tileRows) {
  numerics::QuantizedTensor q;
  q.rows = rows;
  q.cols = cols;
  q.format = numerics::Format::E4M3;
  q.granularity = numerics::Granularity::tile(tileRows, 128);
  q.scaleRows = llvm::divideCeil(rows, tileRows);
  q.scaleCols = llvm::divideCeil(cols, 128);
  std::uniform_int_distribution<int> code(0, 255);
  q.data.resize(size_t(rows * cols));
  for (uint8_t &x : q.data) {
    do
      x = static_cast<uint8_t>(code(rng));
    while ((x & 0x7F) == 0x7F); // E4M3 NaN
  }
  // Mostly moderate exponents (so products do not all cancel), with the
  // extremes of the UE8M0 range mixed in.
  std::uniform_int_distribution<int> exponent(-20, 20), extreme(0, 7);
  for (int64_t i = 0; i < q.scaleRows * q.scaleCols; ++i) {
    const int pick = extreme(rng);
    const int e = pick == 0 ? -127 : pick == 1 ? 127 : exponent(rng);
    q.scaleInv.push_back(std::ldexp(1.f, e));
  }
  return q;
}

// The documented host conversion of the sm_100a blockwise-as-MX kernels
// (blockwiseScalesToMxAtoms: the op's f32 scale grid -> the UE8M0 atom image
// the kernel's scale operands take) on random power-of-two scales, followed
// by the emulated block-scaled GEMM (TMA of the atoms, tcgen05.cp, sf_id
// 0..3), equals scaledMatmulReference of the blockwise inputs exactly. B
// takes 128x128 weight tiles ("1D x 2D") or 1x128 tiles ("1D x 1D", the
// wgrad GEMM): the same conversion as A's.
TEST(ScaleEmulation, BlockwiseHostConversionGemmMatchesReference) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  std::mt19937_64 rng(seed);
  struct Case {
    Shape s;
    int64_t bTileRows;
  };
  const Case cases[] = {{{128, 256, 512, 256}, 128},
                        {{200, 160, 304, 32}, 128},
                        {{384, 384, 128, 128}, 128},
                        {{128, 256, 512, 256}, 1},
                        {{200, 160, 304, 32}, 1}};
  for (const auto &[s, bTileRows] : cases) {
    SCOPED_TRACE(testing::Message() << "M=" << s.m << " N=" << s.n
                                    << " K=" << s.k << " B tile "
                                    << bTileRows << "x128");
    const numerics::QuantizedTensor qa = randomPow2Blockwise(rng, s.m, s.k, 1);
    const numerics::QuantizedTensor qb =
        randomPow2Blockwise(rng, s.n, s.k, bTileRows);
    std::string error;
    std::optional<std::vector<uint8_t>> aImage = blockwiseScalesToMxAtoms(
        qa.scaleInv.data(), s.m, s.k, 1, 128, &error);
    ASSERT_TRUE(aImage) << error;
    std::optional<std::vector<uint8_t>> bImage = blockwiseScalesToMxAtoms(
        qb.scaleInv.data(), s.n, s.k, bTileRows, 128, &error);
    ASSERT_TRUE(bImage) << error;
    // What the metadata promises: the atom layout, sized [ceil(MN/128),
    // ceil(K/128), 512], and the four bytes of a 128-K group (one 32-bit
    // TMEM cell after tcgen05.cp) equal.
    EXPECT_EQ(aImage->size(), llvm::divideCeil(s.m, 128) * llvm::divideCeil(s.k, 128) * 512);
    EXPECT_EQ(bImage->size(), llvm::divideCeil(s.n, 128) * llvm::divideCeil(s.k, 128) * 512);
    const int64_t kBlocks = llvm::divideCeil(s.k, 32);
    for (const auto &[image, rows] :
         {std::pair<const std::vector<uint8_t> *, int64_t>{&*aImage, s.m},
          {&*bImage, s.n}}) {
      const ScaleFactorLayout layout = makeScaleFactorLayout(rows, kBlocks);
      int64_t unequal = 0;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t kb = 0; kb < kBlocks; ++kb)
          unequal += (*image)[scaleFactorByteOffset(layout, r, kb)] !=
                     (*image)[scaleFactorByteOffset(layout, r, kb / 4 * 4)];
      EXPECT_EQ(unequal, 0);
    }

    std::optional<EmulatedBlockScaledGemm> gemm = emulateBlockScaledGemm(
        qa.data.data(), qa.format, qb.data.data(), qb.format, s.m, s.n, s.k,
        *aImage, *bImage, s.tileN, &error);
    ASSERT_TRUE(gemm) << error;
    EXPECT_EQ(gemm->replicaMismatches, 0);
    int64_t aWrong = 0, bWrong = 0;
    for (int64_t r = 0; r < s.m; ++r)
      for (int64_t kk = 0; kk < s.k; ++kk)
        aWrong += numerics::decodeUe8m0(gemm->aScaleUsed[r * s.k + kk]) !=
                  qa.scaleInvAt(r, kk);
    for (int64_t c = 0; c < s.n; ++c)
      for (int64_t kk = 0; kk < s.k; ++kk)
        bWrong += numerics::decodeUe8m0(gemm->bScaleUsed[c * s.k + kk]) !=
                  qb.scaleInvAt(c, kk);
    EXPECT_EQ(aWrong, 0);
    EXPECT_EQ(bWrong, 0);

    const std::vector<double> reference = numerics::scaledMatmulReference(
        qa, numerics::Major::K, qb, numerics::Major::K, nullptr, nullptr);
    ASSERT_EQ(reference.size(), gemm->out.size());
    int64_t outWrong = 0;
    for (size_t i = 0; i < reference.size(); ++i)
      outWrong += gemm->out[i] != reference[i];
    EXPECT_EQ(outWrong, 0);
  }

  // Non-power-of-two (f32 recipe) scales have no UE8M0 image.
  const float notPow2[] = {0.75f, 1.f};
  std::string error;
  EXPECT_FALSE(blockwiseScalesToMxAtoms(notPow2, 2, 128, 1, 128, &error));
  EXPECT_NE(error.find("power of two"), std::string::npos);
  // Tiles must cover whole 32-K MX blocks.
  const float pow2[] = {0.5f, 1.f, 2.f};
  EXPECT_FALSE(blockwiseScalesToMxAtoms(pow2, 1, 128, 1, 48, &error));
}

TEST(ScaleEmulation, Float32BlockwiseScalesAreRejected) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  std::mt19937_64 rng(seed);
  const std::vector<float> a = randomMatrix(rng, 4, 256);
  const numerics::QuantizedTensor q = numerics::quantize(
      a.data(), 4, 256, numerics::Format::E4M3,
      numerics::Granularity::tile(1, 128),
      numerics::ScaleRule::blockwise(numerics::BlockScaleKind::Float32, 1e-4f));
  bool allPow2 = true;
  for (float s : q.scaleInv)
    allPow2 &= powerOfTwoToUe8m0(s).has_value();
  std::string error;
  EXPECT_EQ(blockwiseScalesToMx(q, &error).has_value(), allPow2);
  if (!allPow2) {
    EXPECT_NE(error.find("power of two"), std::string::npos);
  }
  // MX and per-tensor granularities are not blockwise.
  const numerics::QuantizedTensor mx =
      numerics::quantize(a.data(), 4, 256, numerics::Format::E4M3,
                         numerics::Granularity::mx(32), numerics::ScaleRule::mx());
  EXPECT_FALSE(blockwiseScalesToMx(mx));
}

TEST(ScaleEmulation, RejectsBadArguments) {
  const std::vector<uint8_t> data(128 * 64, 0), image(512, 0);
  std::string error;
  EXPECT_FALSE(emulateBlockScaledGemm(data.data(), numerics::Format::E4M3,
                                      data.data(), numerics::Format::E4M3, 128,
                                      128, 64, image, image, 48, &error));
  EXPECT_FALSE(error.empty());
  // Images sized for K = 64 (one atom each) but K = 160 needs two.
  EXPECT_FALSE(emulateBlockScaledGemm(data.data(), numerics::Format::E4M3,
                                      data.data(), numerics::Format::E4M3, 128,
                                      128, 160, image, image, 128));
}

} // namespace

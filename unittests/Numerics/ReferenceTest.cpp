//===- ReferenceTest.cpp - Reference quantize / dequantize / matmul -------===//

#include "FP8/Numerics/Reference.h"
#include "OracleSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

using namespace fp8::numerics;

namespace {

constexpr int64_t kRows = 130; // tails for 128-row tiles
constexpr int64_t kCols = 260; // tails for 128- and 32-column blocks

/// Random matrix with a wide dynamic range (so blocks get different scales),
/// exact zeros, and one all-zero row (amax 0 -> scale 1).
std::vector<float> randomMatrix(std::mt19937_64 &rng, int64_t rows, int64_t cols) {
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> exponent(-12, 12);
  std::uniform_int_distribution<int> percent(0, 99);
  std::vector<float> x(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    const int rowExponent = exponent(rng);
    for (int64_t c = 0; c < cols; ++c) {
      const int p = percent(rng);
      float v = std::ldexp(normal(rng), rowExponent + (c / 32) % 5);
      if (p < 3)
        v = 0.f;
      else if (p < 5)
        v *= 40.f; // outliers
      x[r * cols + c] = r == 3 ? 0.f : v;
    }
  }
  return x;
}

struct QuantizeCase {
  std::string name;
  Format format;
  Granularity granularity;
  ScaleRule rule;
};

std::vector<QuantizeCase> quantizeCases(float delayedScale) {
  using G = Granularity;
  return {
      {"tensor_current_e4m3", Format::E4M3, G::tensor(), ScaleRule::current()},
      {"tensor_current_e5m2", Format::E5M2, G::tensor(), ScaleRule::current()},
      {"tensor_current_pow2", Format::E4M3, G::tensor(), ScaleRule::current(0.f, true)},
      {"tensor_delayed", Format::E4M3, G::tensor(), ScaleRule::delayed(delayedScale)},
      {"row_current", Format::E4M3, G::row(), ScaleRule::current(1e-12f)},
      {"row_current_e5m2_pow2", Format::E5M2, G::row(), ScaleRule::current(0.f, true)},
      {"tile1x128_pow2", Format::E4M3, G::tile(1, 128), ScaleRule::blockwise()},
      {"tile1x128_f32", Format::E4M3, G::tile(1, 128),
       ScaleRule::blockwise(BlockScaleKind::Float32, 1e-4f)},
      {"tile128x128_pow2", Format::E4M3, G::tile(128, 128), ScaleRule::blockwise()},
      {"tile128x128_current", Format::E4M3, G::tile(128, 128), ScaleRule::current()},
      {"mx32_roundup_e4m3", Format::E4M3, G::mx(32), ScaleRule::mx()},
      {"mx32_roundup_e5m2", Format::E5M2, G::mx(32), ScaleRule::mx()},
      {"mx32_ocp_e4m3", Format::E4M3, G::mx(32), ScaleRule::mx(Ue8m0Rule::Ocp)},
      {"mx32_ocp_e5m2", Format::E5M2, G::mx(32), ScaleRule::mx(Ue8m0Rule::Ocp)},
  };
}

/// The expected result, computed independently of quantize(): one pass that
/// maps each element to its block by index arithmetic, then the rule's own
/// scale function per block, then the cast.
struct IndependentQuantization {
  int64_t gridRows, gridCols;
  std::vector<float> blockAmax, scale, scaleInv;
  std::vector<uint8_t> e8m0, data;
};

IndependentQuantization quantizeIndependently(const std::vector<float> &x, int64_t rows,
                                              int64_t cols, int64_t blockRows,
                                              int64_t blockCols, Format format,
                                              const ScaleRule &rule) {
  IndependentQuantization out;
  out.gridRows = (rows + blockRows - 1) / blockRows;
  out.gridCols = (cols + blockCols - 1) / blockCols;
  const size_t blocks = size_t(out.gridRows * out.gridCols);
  out.blockAmax.assign(blocks, 0.f);
  auto blockOf = [&](int64_t r, int64_t c) {
    return size_t((r / blockRows) * out.gridCols + c / blockCols);
  };
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float &m = out.blockAmax[blockOf(r, c)];
      const float v = std::fabs(x[r * cols + c]);
      m = (std::isnan(m) || std::isnan(v)) ? NAN : std::max(m, v);
    }
  out.scale.resize(blocks);
  out.scaleInv.resize(blocks);
  out.e8m0.assign(blocks, 0);
  for (size_t b = 0; b < blocks; ++b) {
    const float a = out.blockAmax[b];
    switch (rule.kind) {
    case ScaleRule::Kind::Delayed:
      out.scale[b] = rule.scale;
      out.scaleInv[b] = 1.f / rule.scale;
      break;
    case ScaleRule::Kind::Current:
      out.scale[b] = currentScalingScale(a, format, rule.epsilon, rule.powerOfTwo);
      out.scaleInv[b] = 1.f / out.scale[b];
      break;
    case ScaleRule::Kind::Blockwise: {
      const BlockScale s = blockwiseScale(a, rule.blockKind, rule.amaxClamp);
      out.scale[b] = s.scale;
      out.scaleInv[b] = s.scaleInv;
      break;
    }
    case ScaleRule::Kind::MX:
      out.e8m0[b] = mxScaleExponent(a, format, rule.ue8m0Rule);
      out.scale[b] = float(std::ldexp(1.0, 127 - out.e8m0[b]));
      out.scaleInv[b] = float(std::ldexp(1.0, out.e8m0[b] - 127));
      break;
    }
  }
  out.data.resize(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out.data[r * cols + c] = encodeSatFinite(format, x[r * cols + c] * out.scale[blockOf(r, c)]);
  return out;
}

/// Block extent of a granularity on a rows x cols matrix, written out per kind.
std::pair<int64_t, int64_t> blockExtent(const Granularity &g, int64_t rows, int64_t cols) {
  switch (g.kind) {
  case Granularity::Tensor:
    return {rows, cols};
  case Granularity::Row:
    return {1, cols};
  default:
    return {g.tileRows, g.tileCols};
  }
}

void expectMatchesIndependent(const QuantizedTensor &q, const std::vector<float> &x,
                              int64_t rows, int64_t cols, int64_t blockRows,
                              int64_t blockCols, Format format, const ScaleRule &rule) {
  const IndependentQuantization expected =
      quantizeIndependently(x, rows, cols, blockRows, blockCols, format, rule);
  ASSERT_EQ(q.rows, rows);
  ASSERT_EQ(q.cols, cols);
  ASSERT_EQ(q.scaleRows, expected.gridRows);
  ASSERT_EQ(q.scaleCols, expected.gridCols);
  if (q.isMX()) {
    ASSERT_TRUE(q.scaleInv.empty());
    EXPECT_EQ(q.scaleE8m0, expected.e8m0);
  } else {
    ASSERT_TRUE(q.scaleE8m0.empty());
    ASSERT_EQ(q.scaleInv.size(), expected.scaleInv.size());
    for (size_t b = 0; b < expected.scaleInv.size(); ++b)
      ASSERT_EQ(floatBits(q.scaleInv[b]), floatBits(expected.scaleInv[b])) << "block " << b;
  }
  ASSERT_EQ(q.data.size(), expected.data.size());
  for (size_t i = 0; i < expected.data.size(); ++i)
    ASSERT_EQ(int(q.data[i]), int(expected.data[i]))
        << "element (" << i / cols << ", " << i % cols << ") x=" << x[i];
}

TEST(ReferenceQuantize, EveryGranularityMatchesIndependentLoop) {
  const uint64_t seed = oracle::freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed << " (FP8_TEST_SEED)");
  std::mt19937_64 rng(seed);
  const std::vector<float> x = randomMatrix(rng, kRows, kCols);
  const float tensorAmax = amax(x.data(), x.size());
  const float delayedScale = 0.5f * currentScalingScale(tensorAmax, Format::E4M3);
  for (const QuantizeCase &tc : quantizeCases(delayedScale)) {
    SCOPED_TRACE(tc.name);
    const QuantizedTensor q = quantize(x.data(), kRows, kCols, tc.format, tc.granularity, tc.rule);
    const auto [blockRows, blockCols] = blockExtent(tc.granularity, kRows, kCols);
    expectMatchesIndependent(q, x, kRows, kCols, blockRows, blockCols, tc.format, tc.rule);
    EXPECT_EQ(q.amax, tensorAmax);
    EXPECT_EQ(q.format, tc.format);
  }
}

TEST(ReferenceQuantize, ScaleGridShapes) {
  const std::vector<float> x(size_t(kRows * kCols), 1.f);
  auto shapeOf = [&](Granularity g, ScaleRule rule) {
    const QuantizedTensor q = quantize(x.data(), kRows, kCols, Format::E4M3, g, rule);
    EXPECT_EQ(size_t(q.scaleRows * q.scaleCols),
              q.isMX() ? q.scaleE8m0.size() : q.scaleInv.size());
    return std::make_pair(q.scaleRows, q.scaleCols);
  };
  using P = std::pair<int64_t, int64_t>;
  EXPECT_EQ(shapeOf(Granularity::tensor(), ScaleRule::current()), P(1, 1));
  EXPECT_EQ(shapeOf(Granularity::row(), ScaleRule::current()), P(130, 1));
  EXPECT_EQ(shapeOf(Granularity::tile(1, 128), ScaleRule::blockwise()), P(130, 3));
  EXPECT_EQ(shapeOf(Granularity::tile(128, 128), ScaleRule::blockwise()), P(2, 3));
  EXPECT_EQ(shapeOf(Granularity::mx(32), ScaleRule::mx()), P(130, 9));
  EXPECT_EQ(shapeOf(Granularity::tile(7, 5), ScaleRule::current()), P(19, 52));
}

/// Per-block max |decoded q|: the property each rule promises.
TEST(ReferenceQuantize, BlockMaximaLandWhereTheRuleSays) {
  const uint64_t seed = oracle::freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed << " (FP8_TEST_SEED)");
  std::mt19937_64 rng(seed);
  const std::vector<float> x = randomMatrix(rng, kRows, kCols);
  for (const QuantizeCase &tc : quantizeCases(1.f)) {
    SCOPED_TRACE(tc.name);
    const ScaleRule &rule = tc.rule;
    if (rule.kind == ScaleRule::Kind::Delayed)
      continue;
    const QuantizedTensor q = quantize(x.data(), kRows, kCols, tc.format, tc.granularity, rule);
    const auto [blockRows, blockCols] = blockExtent(tc.granularity, kRows, kCols);
    const float maxValue = maxFinite(tc.format);
    // Exactly +-max: x_amax * RN(max / x_amax) is within an f32 ulp of max
    // and the fp8 spacing there is 32 (E4M3) / 8192 (E5M2). Same for the
    // blockwise f32 scale 1/RN(amax/448).
    const bool exactMax = (rule.kind == ScaleRule::Kind::Current && !rule.powerOfTwo) ||
                          (rule.kind == ScaleRule::Kind::Blockwise &&
                           rule.blockKind == BlockScaleKind::Float32);
    // Power-of-two scales lose at most a factor 2; OCP's floor rule puts the
    // block amax in [2^emax, 2^(emax+1)) before saturation.
    const float lowerBound = exactMax ? maxValue
                             : (rule.kind == ScaleRule::Kind::MX && rule.ue8m0Rule == Ue8m0Rule::Ocp)
                                 ? std::ldexp(1.f, maxExponent(tc.format))
                                 : maxValue / 2;
    for (int64_t r0 = 0; r0 < kRows; r0 += blockRows)
      for (int64_t c0 = 0; c0 < kCols; c0 += blockCols) {
        float blockMax = 0.f, qMax = 0.f;
        int64_t argMax = -1;
        for (int64_t r = r0; r < std::min(kRows, r0 + blockRows); ++r)
          for (int64_t c = c0; c < std::min(kCols, c0 + blockCols); ++c) {
            if (std::fabs(x[r * kCols + c]) > blockMax) {
              blockMax = std::fabs(x[r * kCols + c]);
              argMax = r * kCols + c;
            }
            qMax = std::max(qMax, std::fabs(decode(tc.format, q.data[r * kCols + c])));
          }
        ASSERT_LE(qMax, maxValue);
        if (blockMax == 0.f) {
          ASSERT_EQ(qMax, 0.f);
          continue;
        }
        ASSERT_GE(qMax, lowerBound) << "block (" << r0 << ", " << c0 << ")";
        if (exactMax) {
          ASSERT_EQ(decode(tc.format, q.data[argMax]), std::copysign(maxValue, x[argMax]));
        }
      }
  }
}

TEST(ReferenceQuantize, DequantizeRoundTripErrorIsBounded) {
  const uint64_t seed = oracle::freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed << " (FP8_TEST_SEED)");
  std::mt19937_64 rng(seed);
  const std::vector<float> x = randomMatrix(rng, kRows, kCols);
  const float delayedScale = 0.5f * currentScalingScale(amax(x.data(), x.size()), Format::E4M3);
  for (const QuantizeCase &tc : quantizeCases(delayedScale)) {
    SCOPED_TRACE(tc.name);
    const QuantizedTensor q = quantize(x.data(), kRows, kCols, tc.format, tc.granularity, tc.rule);
    const std::vector<float> y = dequantize(q);
    const int mantissaBits = tc.format == Format::E4M3 ? 3 : 2;
    // Half an ulp relative; OCP may clip by up to 1/8 (512 -> 448, 2^16 ->
    // 57344), no worse than E5M2's half ulp.
    const bool clips = tc.rule.kind == ScaleRule::Kind::MX && tc.rule.ue8m0Rule == Ue8m0Rule::Ocp;
    const double relative = clips ? 0.125 : std::ldexp(1.0, -mantissaBits - 1);
    // Half the smallest subnormal, in scaled units.
    const double absoluteScaled = tc.format == Format::E4M3 ? 0x1p-10 : 0x1p-17;
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t c = 0; c < kCols; ++c) {
        const double xv = x[r * kCols + c];
        // Plus slack for the f32 roundings of x * scale and q * scale_inv.
        const double bound =
            std::fabs(xv) * (relative + 0x1p-20) + absoluteScaled * q.scaleInvAt(r, c);
        ASSERT_LE(std::fabs(double(y[r * kCols + c]) - xv), bound)
            << "element (" << r << ", " << c << ")";
        ASSERT_EQ(y[r * kCols + c], decode(tc.format, q.data[r * kCols + c]) * q.scaleInvAt(r, c));
      }
  }
}

TEST(ReferenceQuantize, ColumnwiseOf1x128Is128x1BlocksOfX) {
  const uint64_t seed = oracle::freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed << " (FP8_TEST_SEED)");
  std::mt19937_64 rng(seed);
  const std::vector<float> x = randomMatrix(rng, kRows, kCols);
  const QuantizedTensor columnwise = quantizeTransposed(
      x.data(), kRows, kCols, Format::E4M3, Granularity::tile(1, 128), ScaleRule::blockwise());
  const QuantizedTensor tall = quantize(x.data(), kRows, kCols, Format::E4M3,
                                        Granularity::tile(128, 1), ScaleRule::blockwise());
  ASSERT_EQ(columnwise.rows, kCols);
  ASSERT_EQ(columnwise.cols, kRows);
  ASSERT_EQ(columnwise.scaleRows, kCols);
  ASSERT_EQ(columnwise.scaleCols, 2);
  ASSERT_EQ(tall.scaleRows, 2);
  ASSERT_EQ(tall.scaleCols, kCols);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kCols; ++c)
      ASSERT_EQ(columnwise.data[c * kRows + r], tall.data[r * kCols + c]);
  for (int64_t kb = 0; kb < 2; ++kb)
    for (int64_t c = 0; c < kCols; ++c)
      ASSERT_EQ(columnwise.scaleInv[c * 2 + kb], tall.scaleInv[kb * kCols + c]);
  // And independently: 128x1 blocks of x.
  expectMatchesIndependent(tall, x, kRows, kCols, 128, 1, Format::E4M3, ScaleRule::blockwise());
}

TEST(ReferenceQuantize, ColumnwiseOf128x128IsTransposeOfRowwise) {
  const uint64_t seed = oracle::freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed << " (FP8_TEST_SEED)");
  std::mt19937_64 rng(seed);
  const std::vector<float> x = randomMatrix(rng, kRows, kCols);
  for (BlockScaleKind kind : {BlockScaleKind::PowerOfTwo, BlockScaleKind::Float32}) {
    const ScaleRule rule = ScaleRule::blockwise(kind);
    const QuantizedTensor rowwise =
        quantize(x.data(), kRows, kCols, Format::E4M3, Granularity::tile(128, 128), rule);
    const QuantizedTensor columnwise =
        quantizeTransposed(x.data(), kRows, kCols, Format::E4M3, Granularity::tile(128, 128), rule);
    EXPECT_EQ(columnwise.data, transposedData(rowwise));
    ASSERT_EQ(columnwise.scaleRows, rowwise.scaleCols);
    ASSERT_EQ(columnwise.scaleCols, rowwise.scaleRows);
    for (int64_t i = 0; i < rowwise.scaleRows; ++i)
      for (int64_t j = 0; j < rowwise.scaleCols; ++j)
        EXPECT_EQ(columnwise.scaleInv[j * rowwise.scaleRows + i],
                  rowwise.scaleInv[i * rowwise.scaleCols + j]);
  }
}

TEST(ReferenceQuantize, ColumnwiseMxIs32x1BlocksAndDiffersFromRowwise) {
  const uint64_t seed = oracle::freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed << " (FP8_TEST_SEED)");
  std::mt19937_64 rng(seed);
  const std::vector<float> x = randomMatrix(rng, kRows, kCols);
  const QuantizedTensor rowwise =
      quantize(x.data(), kRows, kCols, Format::E4M3, Granularity::mx(32), ScaleRule::mx());
  const QuantizedTensor columnwise = quantizeTransposed(
      x.data(), kRows, kCols, Format::E4M3, Granularity::mx(32), ScaleRule::mx());
  ASSERT_EQ(columnwise.scaleRows, kCols);
  ASSERT_EQ(columnwise.scaleCols, 5); // ceil(130 / 32)
  // 32x1 blocks of x, computed independently, transposed into place.
  const IndependentQuantization tall =
      quantizeIndependently(x, kRows, kCols, 32, 1, Format::E4M3, ScaleRule::mx());
  int64_t differences = 0;
  const std::vector<uint8_t> columnwiseAsRows = transposedData(columnwise);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kCols; ++c) {
      ASSERT_EQ(columnwiseAsRows[r * kCols + c], tall.data[r * kCols + c]);
      ASSERT_EQ(columnwise.scaleE8m0[c * 5 + r / 32], tall.e8m0[(r / 32) * kCols + c]);
      differences += columnwiseAsRows[r * kCols + c] != rowwise.data[r * kCols + c];
    }
  EXPECT_GT(differences, 0) << "rowwise and columnwise MX data must differ";
}

TEST(ReferenceQuantize, NaNBlockPoisonsOnlyItsBlock) {
  std::vector<float> x(64, 1.f);
  x[5] = NAN;
  const QuantizedTensor mx = quantize(x.data(), 1, 64, Format::E4M3, Granularity::mx(32), ScaleRule::mx());
  EXPECT_EQ(mx.scaleE8m0[0], 0xFF);
  EXPECT_EQ(mx.scaleE8m0[1], mxScaleExponent(1.f, Format::E4M3));
  EXPECT_TRUE(std::isnan(mx.amax));
  const QuantizedTensor tile = quantize(x.data(), 1, 64, Format::E4M3, Granularity::tile(1, 32),
                                        ScaleRule::current());
  EXPECT_EQ(tile.scaleInv[0], 1.f) << "NaN amax -> scale 1";
  EXPECT_EQ(tile.data[5] & 0x7F, 0x7F);
  EXPECT_EQ(tile.data[6], encodeSatFinite(Format::E4M3, 1.f));
  EXPECT_EQ(tile.scaleInv[1], 1.f / 448.f);
}

TEST(ReferenceQuantize, InvalidArgumentsAreReported) {
  using G = Granularity;
  const Format e4 = Format::E4M3;
  EXPECT_EQ(checkQuantizeArguments(4, 4, e4, G::tile(1, 128), ScaleRule::blockwise()), "");
  EXPECT_EQ(checkQuantizeArguments(4, 4, e4, G::tensor(), ScaleRule::delayed(2.f)), "");
  EXPECT_EQ(checkQuantizeArguments(4, 4, Format::E5M2, G::mx(), ScaleRule::mx()), "");
  EXPECT_NE(checkQuantizeArguments(-1, 4, e4, G::tensor(), ScaleRule::current()), "");
  EXPECT_NE(checkQuantizeArguments(4, 4, e4, G::tile(0, 128), ScaleRule::current()), "");
  EXPECT_NE(checkQuantizeArguments(4, 4, e4, G::tile(1, 32), ScaleRule::mx()), "");
  EXPECT_NE(checkQuantizeArguments(4, 4, e4, G::mx(), ScaleRule::current()), "");
  EXPECT_NE(checkQuantizeArguments(4, 4, e4, G::row(), ScaleRule::delayed(2.f)), "");
  EXPECT_NE(checkQuantizeArguments(4, 4, e4, G::tensor(), ScaleRule::delayed(0.f)), "");
  EXPECT_NE(checkQuantizeArguments(4, 4, e4, G::tensor(), ScaleRule::delayed(NAN)), "");
  EXPECT_NE(checkQuantizeArguments(4, 4, e4, G::tensor(), ScaleRule::delayed(INFINITY)), "");
  EXPECT_NE(checkQuantizeArguments(4, 4, Format::E5M2, G::tile(1, 128), ScaleRule::blockwise()), "");
  EXPECT_NE(checkQuantizeArguments(4, 4, e4, G{G::Tensor, 1, 1}, ScaleRule::current()), "");
  const float x[4] = {1, 2, 3, 4};
  EXPECT_DEATH(quantize(x, 2, 2, e4, G::tile(1, 2), ScaleRule::mx()), "MX granularity");
}

//===----------------------------------------------------------------------===//
// Scaled matmul reference
//===----------------------------------------------------------------------===//

constexpr int64_t kM = 37, kN = 45, kK = 300;

struct MatmulCase {
  std::string name;
  Format aFormat, bFormat;
  Granularity aGranularity, bGranularity;
  ScaleRule aRule, bRule;
};

std::vector<MatmulCase> matmulCases() {
  using G = Granularity;
  const Format e4 = Format::E4M3, e5 = Format::E5M2;
  return {
      {"blockwise_pow2", e4, e4, G::tile(1, 128), G::tile(128, 128), ScaleRule::blockwise(),
       ScaleRule::blockwise()},
      {"blockwise_f32", e4, e4, G::tile(1, 128), G::tile(128, 128),
       ScaleRule::blockwise(BlockScaleKind::Float32, 1e-4f),
       ScaleRule::blockwise(BlockScaleKind::Float32, 1e-4f)},
      {"mxfp8", e4, e4, G::mx(), G::mx(), ScaleRule::mx(), ScaleRule::mx()},
      {"tensor_hybrid", e4, e5, G::tensor(), G::tensor(), ScaleRule::current(),
       ScaleRule::current()},
      {"row_x_delayed", e4, e4, G::row(), G::tensor(), ScaleRule::current(),
       ScaleRule::delayed(0.25f)},
  };
}

/// Operand in the requested storage order (scales stay logical).
QuantizedTensor withMajor(QuantizedTensor q, Major major) {
  if (major == Major::MN)
    q.data = transposedData(q);
  return q;
}

TEST(ScaledMatmulReference, MatchesNaiveLoopForEveryMajorWithBiasAndAccumulate) {
  const uint64_t seed = oracle::freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed << " (FP8_TEST_SEED)");
  std::mt19937_64 rng(seed);
  const std::vector<float> xa = randomMatrix(rng, kM, kK);
  const std::vector<float> xb = randomMatrix(rng, kN, kK);
  std::normal_distribution<double> normal;
  std::vector<double> bias(kN), accumulate(size_t(kM * kN));
  for (double &v : bias)
    v = normal(rng);
  for (double &v : accumulate)
    v = normal(rng);

  for (const MatmulCase &tc : matmulCases()) {
    SCOPED_TRACE(tc.name);
    const QuantizedTensor a = quantize(xa.data(), kM, kK, tc.aFormat, tc.aGranularity, tc.aRule);
    const QuantizedTensor b = quantize(xb.data(), kN, kK, tc.bFormat, tc.bGranularity, tc.bRule);
    const std::vector<float> da = dequantize(a), db = dequantize(b);
    std::vector<double> naive(size_t(kM * kN)), magnitude(size_t(kM * kN));
    for (int64_t m = 0; m < kM; ++m)
      for (int64_t n = 0; n < kN; ++n)
        for (int64_t k = 0; k < kK; ++k) {
          naive[m * kN + n] += double(da[m * kK + k]) * db[n * kK + k];
          magnitude[m * kN + n] += std::fabs(double(da[m * kK + k]) * db[n * kK + k]);
        }

    const std::vector<double> plain =
        scaledMatmulReference(a, Major::K, b, Major::K, nullptr, nullptr);
    // The reference dequantizes exactly in f64; dequantize() rounds each
    // element to f32 (2^-24 relative), hence the tolerance.
    for (size_t i = 0; i < plain.size(); ++i)
      ASSERT_NEAR(plain[i], naive[i], 0x1p-22 * magnitude[i] + 1e-300) << "i=" << i;

    for (Major aMajor : {Major::K, Major::MN})
      for (Major bMajor : {Major::K, Major::MN}) {
        SCOPED_TRACE(testing::Message() << "aMajor=" << int(aMajor) << " bMajor=" << int(bMajor));
        const QuantizedTensor as = withMajor(a, aMajor), bs = withMajor(b, bMajor);
        EXPECT_EQ(scaledMatmulReference(as, aMajor, bs, bMajor, nullptr, nullptr), plain);
        const std::vector<double> full =
            scaledMatmulReference(as, aMajor, bs, bMajor, bias.data(), accumulate.data());
        const std::vector<double> biasOnly =
            scaledMatmulReference(as, aMajor, bs, bMajor, bias.data(), nullptr);
        const std::vector<double> accumulateOnly =
            scaledMatmulReference(as, aMajor, bs, bMajor, nullptr, accumulate.data());
        for (int64_t m = 0; m < kM; ++m)
          for (int64_t n = 0; n < kN; ++n) {
            const size_t i = size_t(m * kN + n);
            ASSERT_EQ(full[i], plain[i] + bias[n] + accumulate[i]);
            ASSERT_EQ(biasOnly[i], plain[i] + bias[n]);
            ASSERT_EQ(accumulateOnly[i], plain[i] + accumulate[i]);
          }
      }
  }
}

TEST(ScaledMatmulReference, EqualsPerKBlockPromotionFormula) {
  // What the Hopper blockwise kernel computes, in exact arithmetic: per
  // K block, sum q_a * q_b (exact in f64), times sA[m][kb] * sB[n/128][kb].
  const uint64_t seed = oracle::freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed << " (FP8_TEST_SEED)");
  std::mt19937_64 rng(seed);
  const std::vector<float> xa = randomMatrix(rng, kM, kK);
  const std::vector<float> xb = randomMatrix(rng, kN, kK);
  const QuantizedTensor a =
      quantize(xa.data(), kM, kK, Format::E4M3, Granularity::tile(1, 128), ScaleRule::blockwise());
  const QuantizedTensor b = quantize(xb.data(), kN, kK, Format::E4M3, Granularity::tile(128, 128),
                                     ScaleRule::blockwise());
  const std::vector<double> out = scaledMatmulReference(a, Major::K, b, Major::K, nullptr, nullptr);
  const int64_t kBlocks = (kK + 127) / 128;
  for (int64_t m = 0; m < kM; ++m)
    for (int64_t n = 0; n < kN; ++n) {
      double total = 0, magnitude = 0;
      for (int64_t kb = 0; kb < kBlocks; ++kb) {
        double partial = 0, partialMagnitude = 0;
        for (int64_t k = kb * 128; k < std::min(kK, kb * 128 + 128); ++k) {
          const double p = double(decode(Format::E4M3, a.data[m * kK + k])) *
                           decode(Format::E4M3, b.data[n * kK + k]);
          partial += p;
          partialMagnitude += std::fabs(p);
        }
        const double scale = double(a.scaleInv[m * kBlocks + kb]) *
                             double(b.scaleInv[(n / 128) * kBlocks + kb]);
        total += partial * scale;
        magnitude += partialMagnitude * scale;
      }
      ASSERT_NEAR(out[m * kN + n], total, 1e-13 * magnitude + 1e-300) << m << "," << n;
    }
}

TEST(OutputRounding, F64ToF32ThenNarrow) {
  EXPECT_EQ(roundToOutputType(1.0 + 0x1p-30, OutputType::F32), 1.f);
  EXPECT_EQ(roundToOutputType(1.0 + 0x1p-22, OutputType::F32), 1.f + 0x1p-22f);
  EXPECT_EQ(roundToOutputType(1.0 + 0x1p-9, OutputType::BF16), 1.f);
  EXPECT_EQ(roundToOutputType(1.0 + 0x1p-8, OutputType::BF16), 1.f) << "tie -> even";
  EXPECT_EQ(roundToOutputType(1.0 + 0x1p-7 + 0x1p-8, OutputType::BF16), 1.f + 0x1p-6f);
  // Double rounding by design (the epilogue rounds the f32 accumulator): the
  // 2^-30 is lost in f32, leaving a bf16 tie that goes to even.
  EXPECT_EQ(roundToOutputType(1.0 + 0x1p-8 + 0x1p-30, OutputType::BF16), 1.f);
  EXPECT_EQ(roundToOutputType(65519.0, OutputType::F16), 65504.f);
  EXPECT_EQ(roundToOutputType(65520.0, OutputType::F16), INFINITY);
  EXPECT_EQ(roundToOutputType(1.0 + 0x1p-11, OutputType::F16), 1.f) << "tie -> even";
  EXPECT_EQ(roundToOutputType(-3.0, OutputType::F16), -3.f);
  EXPECT_EQ(roundToOutputType(1e300, OutputType::F32), INFINITY);
  const std::vector<float> many = roundToOutputType({1.0 + 0x1p-9, 2.0}, OutputType::BF16);
  EXPECT_EQ(many, (std::vector<float>{1.f, 2.f}));
}

} // namespace

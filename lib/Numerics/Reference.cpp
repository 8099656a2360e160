//===- Reference.cpp - Host reference quantize / scaled matmul ------------===//

#include "FP8/Numerics/Reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace fp8::numerics {
namespace {

int64_t ceilDiv(int64_t extent, int64_t block) {
  return extent == 0 ? 0 : (extent + block - 1) / block;
}

/// Misuse of the reference is a bug in the caller: report and stop (no
/// exceptions, see checkQuantizeArguments).
[[noreturn]] void fatal(const char *function, const std::string &message) {
  std::fprintf(stderr, "fp8::numerics::%s: %s\n", function, message.c_str());
  std::abort();
}

/// NaN-propagating max |x| over the valid part of one block.
float blockAmax(const float *x, int64_t cols, int64_t r0, int64_t r1,
                int64_t c0, int64_t c1) {
  float result = 0.f;
  for (int64_t r = r0; r < r1; ++r) {
    const float rowAmax = amax(x + r * cols + c0, static_cast<size_t>(c1 - c0));
    if (std::isnan(rowAmax))
      return rowAmax;
    result = std::max(result, rowAmax);
  }
  return result;
}

/// Logical operand (rows x K) in f64, exact: double(q) * double(scale_inv).
std::vector<double> exactDequantizedOperand(const QuantizedTensor &q,
                                            Major major) {
  std::vector<double> out(static_cast<size_t>(q.rows * q.cols));
  for (int64_t r = 0; r < q.rows; ++r)
    for (int64_t k = 0; k < q.cols; ++k) {
      const uint8_t code = major == Major::K ? q.data[r * q.cols + k]
                                             : q.data[k * q.rows + r];
      out[r * q.cols + k] = static_cast<double>(decode(q.format, code)) *
                            static_cast<double>(q.scaleInvAt(r, k));
    }
  return out;
}

} // namespace

GridShape Granularity::scaleGrid(int64_t rows, int64_t cols) const {
  switch (kind) {
  case Tensor:
    return {1, 1};
  case Row:
    return {rows, 1};
  case Tile:
  case MX:
    break;
  }
  return {ceilDiv(rows, blockRows(rows)), ceilDiv(cols, blockCols(cols))};
}

ScaleRule ScaleRule::delayed(float scale) {
  ScaleRule rule;
  rule.kind = Kind::Delayed;
  rule.scale = scale;
  return rule;
}

ScaleRule ScaleRule::current(float epsilon, bool powerOfTwo) {
  ScaleRule rule;
  rule.kind = Kind::Current;
  rule.epsilon = epsilon;
  rule.powerOfTwo = powerOfTwo;
  return rule;
}

ScaleRule ScaleRule::blockwise(BlockScaleKind kind, float amaxClamp) {
  ScaleRule rule;
  rule.kind = Kind::Blockwise;
  rule.blockKind = kind;
  rule.amaxClamp = amaxClamp;
  return rule;
}

ScaleRule ScaleRule::mx(Ue8m0Rule ue8m0Rule) {
  ScaleRule rule;
  rule.kind = Kind::MX;
  rule.ue8m0Rule = ue8m0Rule;
  return rule;
}

ResolvedScale resolveScale(float blockAmax, Format format,
                           const ScaleRule &rule) {
  switch (rule.kind) {
  case ScaleRule::Kind::Delayed:
    return {rule.scale, scaleInverse(rule.scale), 0};
  case ScaleRule::Kind::Current: {
    const float scale = currentScalingScale(blockAmax, format, rule.epsilon,
                                            rule.powerOfTwo);
    return {scale, scaleInverse(scale), 0};
  }
  case ScaleRule::Kind::Blockwise: {
    const BlockScale block =
        blockwiseScale(blockAmax, rule.blockKind, rule.amaxClamp);
    return {block.scale, block.scaleInv, 0};
  }
  case ScaleRule::Kind::MX: {
    const uint8_t e = mxScaleExponent(blockAmax, format, rule.ue8m0Rule);
    return {mxQuantizeMultiplier(e), decodeUe8m0(e), e};
  }
  }
  return {1.f, 1.f, 0};
}

std::string checkQuantizeArguments(int64_t rows, int64_t cols, Format format,
                                   Granularity granularity,
                                   const ScaleRule &rule) {
  if (rows < 0 || cols < 0)
    return "negative shape";
  using G = Granularity;
  using K = ScaleRule::Kind;
  switch (granularity.kind) {
  case G::Tensor:
    if (granularity.tileRows != 0 || granularity.tileCols != 0)
      return "tensor granularity must be 0x0 (use Granularity::tensor())";
    break;
  case G::Row:
    if (granularity.tileRows != 1 || granularity.tileCols != 0)
      return "row granularity must be 1x0 (use Granularity::row())";
    break;
  case G::Tile:
    if (granularity.tileRows <= 0 || granularity.tileCols <= 0)
      return "tile extents must be positive";
    break;
  case G::MX:
    if (granularity.tileRows != 1 || granularity.tileCols <= 0)
      return "MX blocks must be 1 x blockSize with blockSize > 0";
    break;
  }
  if ((granularity.kind == G::MX) != (rule.kind == K::MX))
    return "MX granularity and the MX scale rule go together";
  if (rule.kind == K::Delayed) {
    if (granularity.kind != G::Tensor)
      return "delayed scaling is per-tensor";
    if (!(rule.scale > 0.f) || std::isinf(rule.scale))
      return "delayed scaling needs a finite scale > 0";
  }
  if (rule.kind == K::Blockwise && format != Format::E4M3)
    return "blockwise scaling is defined for E4M3 only";
  return {};
}

float QuantizedTensor::scaleInvAt(int64_t r, int64_t c) const {
  const int64_t index = (r / granularity.blockRows(rows)) * scaleCols +
                        c / granularity.blockCols(cols);
  return isMX() ? decodeUe8m0(scaleE8m0[index]) : scaleInv[index];
}

QuantizedTensor quantize(const float *x, int64_t rows, int64_t cols,
                         Format format, Granularity granularity,
                         const ScaleRule &rule) {
  const std::string error =
      checkQuantizeArguments(rows, cols, format, granularity, rule);
  if (!error.empty())
    fatal("quantize", error);

  QuantizedTensor q;
  q.rows = rows;
  q.cols = cols;
  q.format = format;
  q.granularity = granularity;
  q.data.resize(static_cast<size_t>(rows * cols));
  const GridShape grid = granularity.scaleGrid(rows, cols);
  q.scaleRows = grid.rows;
  q.scaleCols = grid.cols;
  const size_t gridSize = static_cast<size_t>(grid.rows * grid.cols);
  if (q.isMX())
    q.scaleE8m0.resize(gridSize);
  else
    q.scaleInv.resize(gridSize);
  q.amax = amax(x, static_cast<size_t>(rows * cols));

  const int64_t blockRows = granularity.blockRows(rows);
  const int64_t blockCols = granularity.blockCols(cols);
  for (int64_t br = 0; br < grid.rows; ++br) {
    for (int64_t bc = 0; bc < grid.cols; ++bc) {
      // Tail blocks: only the valid elements take part.
      const int64_t r0 = br * blockRows, r1 = std::min(rows, r0 + blockRows);
      const int64_t c0 = bc * blockCols, c1 = std::min(cols, c0 + blockCols);
      const ResolvedScale scale =
          resolveScale(blockAmax(x, cols, r0, r1, c0, c1), format, rule);
      const size_t gridIndex = static_cast<size_t>(br * grid.cols + bc);
      if (q.isMX())
        q.scaleE8m0[gridIndex] = scale.ue8m0;
      else
        q.scaleInv[gridIndex] = scale.scaleInv;
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c)
          q.data[r * cols + c] = encodeSatFinite(format, x[r * cols + c] * scale.scale);
    }
  }
  return q;
}

QuantizedTensor quantizeTransposed(const float *x, int64_t rows, int64_t cols,
                                   Format format, Granularity granularity,
                                   const ScaleRule &rule) {
  std::vector<float> transposed(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      transposed[c * rows + r] = x[r * cols + c];
  return quantize(transposed.data(), cols, rows, format, granularity, rule);
}

std::vector<float> dequantize(const QuantizedTensor &q) {
  std::vector<float> out(q.data.size());
  for (int64_t r = 0; r < q.rows; ++r)
    for (int64_t c = 0; c < q.cols; ++c)
      out[r * q.cols + c] =
          decode(q.format, q.data[r * q.cols + c]) * q.scaleInvAt(r, c);
  return out;
}

std::vector<uint8_t> transposedData(const QuantizedTensor &q) {
  std::vector<uint8_t> out(q.data.size());
  for (int64_t r = 0; r < q.rows; ++r)
    for (int64_t c = 0; c < q.cols; ++c)
      out[c * q.rows + r] = q.data[r * q.cols + c];
  return out;
}

std::vector<double> scaledMatmulReference(const QuantizedTensor &a, Major aMajor,
                                          const QuantizedTensor &b, Major bMajor,
                                          const double *bias, const double *c) {
  if (a.cols != b.cols)
    fatal("scaledMatmulReference", "A and B disagree on K");
  if (a.data.size() != static_cast<size_t>(a.rows * a.cols) ||
      b.data.size() != static_cast<size_t>(b.rows * b.cols))
    fatal("scaledMatmulReference", "operand data size does not match its shape");
  const int64_t m = a.rows, n = b.rows, k = a.cols;
  const std::vector<double> lhs = exactDequantizedOperand(a, aMajor);
  const std::vector<double> rhs = exactDequantizedOperand(b, bMajor);
  std::vector<double> out(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t kk = 0; kk < k; ++kk)
        sum += lhs[i * k + kk] * rhs[j * k + kk];
      if (bias)
        sum += bias[j];
      if (c)
        sum += c[i * n + j];
      out[i * n + j] = sum;
    }
  return out;
}

float roundToOutputType(double value, OutputType type) {
  const float asFloat = static_cast<float>(value); // RN
  switch (type) {
  case OutputType::F32:
    return asFloat;
  case OutputType::BF16:
    return bf16ToFloat(floatToBf16(asFloat));
  case OutputType::F16:
    return f16ToFloat(floatToF16(asFloat));
  }
  return asFloat;
}

std::vector<float> roundToOutputType(const std::vector<double> &values,
                                     OutputType type) {
  std::vector<float> out(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = roundToOutputType(values[i], type);
  return out;
}

} // namespace fp8::numerics

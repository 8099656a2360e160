//===- Reference.h - Host reference quantize / scaled matmul ----*- C++ -*-===//
//
// Slow, obvious host implementations of every recipe's quantization and of the
// scaled GEMM, against which the compiler's constant folders, the generated
// kernels and the runtime are checked. Matrices are row-major `rows x cols`.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_NUMERICS_REFERENCE_H
#define FP8_NUMERICS_REFERENCE_H

#include "FP8/Numerics/Formats.h"
#include "FP8/Numerics/Scaling.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fp8::numerics {

/// Shape of the scale grid.
struct GridShape {
  int64_t rows;
  int64_t cols;
};

/// Which elements share one scale. Blocks tile the matrix from (0, 0); tail
/// blocks of a non-multiple extent cover only their valid elements.
struct Granularity {
  enum Kind : uint8_t { Tensor, Row, Tile, MX };
  Kind kind = Tensor;
  /// Block extent; 0 means "the whole dimension" (Tensor is 0x0, Row is 1x0).
  int64_t tileRows = 0;
  int64_t tileCols = 0;

  static Granularity tensor() { return {Tensor, 0, 0}; }
  static Granularity row() { return {Row, 1, 0}; }
  /// 1x128 (activations/gradients) and 128x128 (weights) in DeepSeek-V3.
  static Granularity tile(int64_t rows, int64_t cols) { return {Tile, rows, cols}; }
  /// 1 x blockSize blocks with UE8M0 scales (MXFP8 uses 32).
  static Granularity mx(int64_t blockSize = 32) { return {MX, 1, blockSize}; }

  /// Block extent in a `rows x cols` matrix.
  int64_t blockRows(int64_t rows) const { return tileRows == 0 ? rows : tileRows; }
  int64_t blockCols(int64_t cols) const { return tileCols == 0 ? cols : tileCols; }

  /// tensor: 1x1 (rank-0 in the IR); row: [rows, 1];
  /// tile/mx: [ceil(rows/tileRows), ceil(cols/tileCols)].
  GridShape scaleGrid(int64_t rows, int64_t cols) const;
};

/// How a block's scale is derived; pairs with a Granularity.
struct ScaleRule {
  enum class Kind : uint8_t { Delayed, Current, Blockwise, MX };
  Kind kind = Kind::Current;
  float scale = 1.f;      ///< Delayed: the scale computed from the history.
  float epsilon = 0.f;    ///< Current: amax clamp.
  bool powerOfTwo = false; ///< Current: round the scale down to 2^k.
  BlockScaleKind blockKind = BlockScaleKind::PowerOfTwo; ///< Blockwise.
  float amaxClamp = 0.f;                                 ///< Blockwise.
  Ue8m0Rule ue8m0Rule = Ue8m0Rule::RoundUp;              ///< MX.

  /// Per-tensor with a known scale (delayed scaling; Tensor granularity).
  static ScaleRule delayed(float scale);
  /// TE current scaling (Tensor, Row or Tile granularity).
  static ScaleRule current(float epsilon = 0.f, bool powerOfTwo = false);
  /// DeepSeek-V3 blockwise (E4M3; Tile, Row or Tensor granularity).
  static ScaleRule blockwise(BlockScaleKind kind = BlockScaleKind::PowerOfTwo,
                             float amaxClamp = 0.f);
  /// MXFP8 (MX granularity).
  static ScaleRule mx(Ue8m0Rule rule = Ue8m0Rule::RoundUp);
};

/// The scale of one block. ue8m0 is the UE8M0 code for MX rules (scale and
/// scaleInv are then its exact powers of two) and 0 otherwise.
struct ResolvedScale {
  float scale;
  float scaleInv;
  uint8_t ue8m0;
};

/// Applies `rule` to a block whose amax is `blockAmax`.
ResolvedScale resolveScale(float blockAmax, Format format, const ScaleRule &rule);

/// Empty when quantize() accepts these arguments, otherwise what is wrong.
/// (The library uses no exceptions: it also links into -fno-exceptions code.)
std::string checkQuantizeArguments(int64_t rows, int64_t cols, Format format,
                                   Granularity granularity, const ScaleRule &rule);

struct QuantizedTensor {
  int64_t rows = 0, cols = 0;
  Format format = Format::E4M3;
  Granularity granularity;
  /// fp8 codes, row-major rows x cols (but see scaledMatmulReference's Major).
  std::vector<uint8_t> data;
  /// f32 scale_inv grid, row-major scaleRows x scaleCols (non-MX).
  std::vector<float> scaleInv;
  /// UE8M0 scale_inv codes, row-major scaleRows x scaleCols (MX only).
  std::vector<uint8_t> scaleE8m0;
  int64_t scaleRows = 0, scaleCols = 0;
  /// max |x| of the whole input (NaN-propagating): what delayed scaling
  /// records into its history.
  float amax = 0.f;

  bool isMX() const { return granularity.kind == Granularity::MX; }
  /// scale_inv of the block holding element (r, c), as f32.
  float scaleInvAt(int64_t r, int64_t c) const;
};

/// q[r][c] = encodeSatFinite(format, x[r][c] * scale(block of (r, c))), the
/// scale from the block's amax under `rule`. Aborts with a message when
/// checkQuantizeArguments() reports an error.
QuantizedTensor quantize(const float *x, int64_t rows, int64_t cols,
                         Format format, Granularity granularity,
                         const ScaleRule &rule);

/// The "columnwise" output of cast+transpose: quantize(x^T), a cols x rows
/// tensor whose blocks run along the ORIGINAL rows. For 1x128 this is 128x1
/// blocks of x, for 128x128 the exact transpose of the rowwise result, for MX
/// 1x32 it is 32x1 blocks of x: different data from the rowwise output.
QuantizedTensor quantizeTransposed(const float *x, int64_t rows, int64_t cols,
                                   Format format, Granularity granularity,
                                   const ScaleRule &rule);

/// decode(q) * scale_inv of its block, f32 RN, row-major rows x cols.
std::vector<float> dequantize(const QuantizedTensor &q);

/// `q.data` re-laid out as [cols][rows]: how an MN-major operand is stored.
std::vector<uint8_t> transposedData(const QuantizedTensor &q);

/// Operand storage order. Logical A is M x K and B is N x K.
/// K-major: A stored [M][K], B stored [N][K]. MN-major: A stored [K][M],
/// B stored [K][N].
enum class Major : uint8_t { K, MN };

/// out[m][n] = sum_k deq(A)[m][k] * deq(B)[n][k] (+ bias[n]) (+ c[m][n]),
/// row-major M x N, in f64. The QuantizedTensor's rows, cols, granularity and
/// scales are always LOGICAL (A: rows = M, cols = K; B: rows = N, cols = K);
/// only `data` follows the Major order (use transposedData() to build an
/// MN-major operand). deq is the exact product double(q) * double(scale_inv)
/// (not rounded to f32 like dequantize()). bias (length N) and c (M x N,
/// row-major) may be null.
std::vector<double> scaledMatmulReference(const QuantizedTensor &a, Major aMajor,
                                          const QuantizedTensor &b, Major bMajor,
                                          const double *bias, const double *c);

enum class OutputType : uint8_t { F32, BF16, F16 };

/// The value a GEMM epilogue stores: f64 -> f32 (RN), then -> bf16/f16 (RNE),
/// returned as f32.
float roundToOutputType(double value, OutputType type);
std::vector<float> roundToOutputType(const std::vector<double> &values,
                                     OutputType type);

} // namespace fp8::numerics

#endif // FP8_NUMERICS_REFERENCE_H

//===- numerics_capi.cpp - C entry points of the numerics reference -------===//
//
// A C ABI over lib/Numerics for the GPU checks (ctypes, on the GPU machine,
// which has no LLVM): built there with
//   c++ -O2 -std=c++17 -shared -fPIC -Iinclude lib/Numerics/*.cpp \
//       test/GPU/numerics_capi.cpp -o libfp8numerics.so
//
//===----------------------------------------------------------------------===//

#include "FP8/Numerics/Reference.h"

#include <cstdio>
#include <cstring>

using namespace fp8::numerics;

extern "C" {

/// quantize() (or quantizeTransposed()) of the rows x cols f32 matrix `x`:
/// codes into `data` (row-major, as quantized: cols x rows when transposed),
/// the scale grid into `scale_inv` (f32, non-MX) or `e8m0` (MX), row-major
/// scaleRows x scaleCols (written to `grid[0..1]`), the amax into `amax`.
/// granularity: 0 tensor, 1 row, 2 tile, 3 mx; rule: 0 delayed, 1 current,
/// 2 blockwise, 3 mx. Returns 0, or 1 with the reason on stderr.
int fp8ref_quantize(const float *x, int64_t rows, int64_t cols, int e5m2,
                    int granularity, int64_t tileRows, int64_t tileCols,
                    int rule, float scale, float epsilon, int pow2,
                    int blockF32, float amaxClamp, int ocp, int transposed,
                    uint8_t *data, float *scaleInv, uint8_t *e8m0,
                    int64_t *grid, float *amaxOut) {
  Format format = e5m2 ? Format::E5M2 : Format::E4M3;
  Granularity g = granularity == 0   ? Granularity::tensor()
                  : granularity == 1 ? Granularity::row()
                  : granularity == 3 ? Granularity::mx(tileCols)
                                     : Granularity::tile(tileRows, tileCols);
  ScaleRule r;
  switch (rule) {
  case 0:
    r = ScaleRule::delayed(scale);
    break;
  case 1:
    r = ScaleRule::current(epsilon, pow2 != 0);
    break;
  case 2:
    r = ScaleRule::blockwise(blockF32 ? BlockScaleKind::Float32
                                      : BlockScaleKind::PowerOfTwo,
                             amaxClamp);
    break;
  default:
    r = ScaleRule::mx(ocp ? Ue8m0Rule::Ocp : Ue8m0Rule::RoundUp);
  }
  std::string error = checkQuantizeArguments(transposed ? cols : rows,
                                             transposed ? rows : cols, format,
                                             g, r);
  if (!error.empty()) {
    std::fprintf(stderr, "fp8ref_quantize: %s\n", error.c_str());
    return 1;
  }
  QuantizedTensor q = transposed
                          ? quantizeTransposed(x, rows, cols, format, g, r)
                          : quantize(x, rows, cols, format, g, r);
  std::memcpy(data, q.data.data(), q.data.size());
  if (q.isMX())
    std::memcpy(e8m0, q.scaleE8m0.data(), q.scaleE8m0.size());
  else
    std::memcpy(scaleInv, q.scaleInv.data(), q.scaleInv.size() * 4);
  grid[0] = q.scaleRows;
  grid[1] = q.scaleCols;
  *amaxOut = q.amax;
  return 0;
}

/// The current-scaling scale of an amax (what fp8.compute_scale folds to).
float fp8ref_current_scale(float amax, int e5m2, float epsilon, int pow2) {
  return currentScalingScale(amax, e5m2 ? Format::E5M2 : Format::E4M3, epsilon,
                             pow2 != 0);
}

/// recordAmax on a history slot.
float fp8ref_record_amax(float slot, float amax) {
  recordAmax(&slot, amax);
  return slot;
}

float fp8ref_amax(const float *x, int64_t n) {
  return amax(x, static_cast<size_t>(n));
}

/// The delayed-scaling fp8.compute_scale: historyAmax, delayedScalingScale
/// and scaleInverse, then rollAmaxHistory of `history` in place.
void fp8ref_delayed_scale(float *history, int64_t length, int mostRecent,
                          int margin, int e5m2, float previousScale,
                          float *scale, float *scaleInv) {
  size_t n = static_cast<size_t>(length);
  float amax = historyAmax(history, n,
                           mostRecent ? AmaxComputeAlgo::MostRecent
                                      : AmaxComputeAlgo::Max);
  *scale = delayedScalingScale(amax, previousScale,
                               e5m2 ? Format::E5M2 : Format::E4M3, margin);
  *scaleInv = scaleInverse(*scale);
  rollAmaxHistory(history, n);
}

/// dequantize() of the rows x cols codes with the logical scale grid
/// (`scale_inv` f32, or `e8m0` for MX), then the op's rounding to the
/// output type: 0 f32 (4-byte words), 1 bf16, 2 f16 (2-byte words), written
/// to `out` as bits. granularity: 0 tensor, 1 row, 2 tile, 3 mx.
void fp8ref_dequantize(const uint8_t *codes, int64_t rows, int64_t cols,
                       int e5m2, int granularity, int64_t tileRows,
                       int64_t tileCols, const float *scaleInv,
                       const uint8_t *e8m0, int outType, void *out) {
  QuantizedTensor q;
  q.rows = rows;
  q.cols = cols;
  q.format = e5m2 ? Format::E5M2 : Format::E4M3;
  q.granularity = granularity == 0   ? Granularity::tensor()
                  : granularity == 1 ? Granularity::row()
                  : granularity == 3 ? Granularity::mx(tileCols)
                                     : Granularity::tile(tileRows, tileCols);
  GridShape grid = q.granularity.scaleGrid(rows, cols);
  q.scaleRows = grid.rows;
  q.scaleCols = grid.cols;
  size_t n = static_cast<size_t>(rows * cols);
  size_t scales = static_cast<size_t>(grid.rows * grid.cols);
  q.data.assign(codes, codes + n);
  if (granularity == 3)
    q.scaleE8m0.assign(e8m0, e8m0 + scales);
  else
    q.scaleInv.assign(scaleInv, scaleInv + scales);
  std::vector<float> values = dequantize(q);
  for (size_t i = 0; i < n; ++i) {
    if (outType == 0) {
      static_cast<float *>(out)[i] = values[i];
      continue;
    }
    static_cast<uint16_t *>(out)[i] =
        outType == 1 ? floatToBf16(values[i]) : floatToF16(values[i]);
  }
}

} // extern "C"

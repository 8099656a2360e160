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
/// granularity: 0 tensor, 2 tile, 3 mx; rule: 0 delayed, 1 current,
/// 2 blockwise, 3 mx. Returns 0, or 1 with the reason on stderr.
int fp8ref_quantize(const float *x, int64_t rows, int64_t cols, int e5m2,
                    int granularity, int64_t tileRows, int64_t tileCols,
                    int rule, float scale, float epsilon, int pow2,
                    int blockF32, float amaxClamp, int ocp, int transposed,
                    uint8_t *data, float *scaleInv, uint8_t *e8m0,
                    int64_t *grid, float *amaxOut) {
  Format format = e5m2 ? Format::E5M2 : Format::E4M3;
  Granularity g = granularity == 0   ? Granularity::tensor()
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

} // extern "C"

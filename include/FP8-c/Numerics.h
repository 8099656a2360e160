/*===-- FP8-c/Numerics.h - C API of the recipe numerics -----------*- C -*-===*\
|*                                                                            *|
|* The host reference of every recipe's quantization (FP8/Numerics), the     *|
|* definition the compiler's folders and the tests use, for bindings that    *|
|* check their own implementations against it (the Python package does).    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FP8_C_NUMERICS_H
#define FP8_C_NUMERICS_H

#include "FP8-c/Dialect.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum Fp8NumericsFormat {
  Fp8NumericsFormatE4M3 = 0, ///< f8E4M3FN
  Fp8NumericsFormatE5M2 = 1, ///< f8E5M2
};
typedef enum Fp8NumericsFormat Fp8NumericsFormat;

/// Which elements share a scale: kind, and the block extent (0: the whole
/// dimension; tensor is 0x0, row 1x0, MX 1xblock).
struct Fp8NumericsGranularity {
  Fp8GranularityKind kind;
  int64_t tileRows;
  int64_t tileCols;
};
typedef struct Fp8NumericsGranularity Fp8NumericsGranularity;

enum Fp8NumericsScaleRuleKind {
  Fp8NumericsScaleRuleDelayed = 0,
  Fp8NumericsScaleRuleCurrent = 1,
  Fp8NumericsScaleRuleBlockwise = 2,
  Fp8NumericsScaleRuleMX = 3,
};
typedef enum Fp8NumericsScaleRuleKind Fp8NumericsScaleRuleKind;

/// How a block's scale is derived; each kind reads its own fields.
struct Fp8NumericsScaleRule {
  Fp8NumericsScaleRuleKind kind;
  float scale;             ///< delayed: the scale from the history
  float epsilon;           ///< current: amax clamp
  bool powerOfTwo;         ///< current: round the scale down to 2^k
  Fp8BlockScaleKind blockKind; ///< blockwise
  float amaxClamp;         ///< blockwise
  Fp8UE8M0Rounding ue8m0Rounding; ///< MX
};
typedef struct Fp8NumericsScaleRule Fp8NumericsScaleRule;

/// An owned quantized tensor; destroy with fp8QuantizedTensorDestroy.
struct Fp8QuantizedTensor {
  void *ptr;
};
typedef struct Fp8QuantizedTensor Fp8QuantizedTensor;

/// Quantizes the row-major `rows x cols` f32 matrix `x`; with `transposed`,
/// the columnwise output of cast+transpose (quantize(x^T), blocks along the
/// original rows). Invalid arguments give a tensor whose error is set.
MLIR_CAPI_EXPORTED Fp8QuantizedTensor fp8NumericsQuantize(
    const float *x, int64_t rows, int64_t cols, Fp8NumericsFormat format,
    Fp8NumericsGranularity granularity, Fp8NumericsScaleRule rule,
    bool transposed);
/// Empty when the quantization succeeded, otherwise what is wrong.
MLIR_CAPI_EXPORTED MlirStringRef fp8QuantizedTensorGetError(Fp8QuantizedTensor t);
MLIR_CAPI_EXPORTED int64_t fp8QuantizedTensorGetRows(Fp8QuantizedTensor t);
MLIR_CAPI_EXPORTED int64_t fp8QuantizedTensorGetCols(Fp8QuantizedTensor t);
/// rows x cols fp8 codes, row-major.
MLIR_CAPI_EXPORTED const uint8_t *fp8QuantizedTensorGetData(Fp8QuantizedTensor t);
MLIR_CAPI_EXPORTED int64_t fp8QuantizedTensorGetScaleRows(Fp8QuantizedTensor t);
MLIR_CAPI_EXPORTED int64_t fp8QuantizedTensorGetScaleCols(Fp8QuantizedTensor t);
/// f32 scale_inv grid, row-major (null for MX).
MLIR_CAPI_EXPORTED const float *
fp8QuantizedTensorGetScaleInv(Fp8QuantizedTensor t);
/// UE8M0 scale_inv codes, row-major (null unless MX).
MLIR_CAPI_EXPORTED const uint8_t *
fp8QuantizedTensorGetScaleE8M0(Fp8QuantizedTensor t);
/// max |x| of the input (NaN-propagating).
MLIR_CAPI_EXPORTED float fp8QuantizedTensorGetAmax(Fp8QuantizedTensor t);
MLIR_CAPI_EXPORTED void fp8QuantizedTensorDestroy(Fp8QuantizedTensor t);

/// f32 -> fp8 code as PTX cvt.rn.satfinite, for `n` values.
MLIR_CAPI_EXPORTED void fp8NumericsEncode(Fp8NumericsFormat format,
                                          const float *x, uint8_t *codes,
                                          size_t n);
/// fp8 code -> f32 (exact), for `n` codes.
MLIR_CAPI_EXPORTED void fp8NumericsDecode(Fp8NumericsFormat format,
                                          const uint8_t *codes, float *x,
                                          size_t n);
/// Delayed scaling: the amax a history gives, and the scale from it.
MLIR_CAPI_EXPORTED float fp8NumericsHistoryAmax(const float *history,
                                                size_t length,
                                                Fp8AmaxComputeAlgo algo);
MLIR_CAPI_EXPORTED float
fp8NumericsDelayedScalingScale(float amax, float previousScale,
                               Fp8NumericsFormat format, int margin);

#ifdef __cplusplus
}
#endif

#endif // FP8_C_NUMERICS_H

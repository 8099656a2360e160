//===- Numerics.cpp - C API of the recipe numerics ------------------------===//

#include "FP8-c/Numerics.h"
#include "FP8/Numerics/Reference.h"

#include "mlir/CAPI/Support.h"

#include <string>

using namespace fp8::numerics;

namespace {
struct QuantizeResult {
  QuantizedTensor tensor;
  std::string error;
};
} // namespace

static QuantizeResult *unwrap(Fp8QuantizedTensor t) {
  return static_cast<QuantizeResult *>(t.ptr);
}

static Format toFormat(Fp8NumericsFormat format) {
  return format == Fp8NumericsFormatE5M2 ? Format::E5M2 : Format::E4M3;
}

static Granularity toGranularity(Fp8NumericsGranularity granularity) {
  return {static_cast<Granularity::Kind>(granularity.kind),
          granularity.tileRows, granularity.tileCols};
}

static ScaleRule toScaleRule(Fp8NumericsScaleRule rule) {
  switch (rule.kind) {
  case Fp8NumericsScaleRuleDelayed:
    return ScaleRule::delayed(rule.scale);
  case Fp8NumericsScaleRuleCurrent:
    return ScaleRule::current(rule.epsilon, rule.powerOfTwo);
  case Fp8NumericsScaleRuleBlockwise:
    return ScaleRule::blockwise(static_cast<BlockScaleKind>(rule.blockKind),
                                rule.amaxClamp);
  case Fp8NumericsScaleRuleMX:
    return ScaleRule::mx(static_cast<Ue8m0Rule>(rule.ue8m0Rounding));
  }
  return ScaleRule::current();
}

Fp8QuantizedTensor fp8NumericsQuantize(const float *x, int64_t rows,
                                       int64_t cols, Fp8NumericsFormat format,
                                       Fp8NumericsGranularity granularity,
                                       Fp8NumericsScaleRule rule,
                                       bool transposed) {
  auto *result = new QuantizeResult();
  if (format != Fp8NumericsFormatE4M3 && format != Fp8NumericsFormatE5M2)
    result->error = "unknown format";
  else if (granularity.kind < Fp8GranularityKindTensor ||
           granularity.kind > Fp8GranularityKindMX)
    result->error = "unknown granularity kind";
  else if (rule.kind < Fp8NumericsScaleRuleDelayed ||
           rule.kind > Fp8NumericsScaleRuleMX)
    result->error = "unknown scale rule";
  else if (rule.blockKind < Fp8BlockScaleKindPowerOfTwo ||
           rule.blockKind > Fp8BlockScaleKindFloat32)
    result->error = "unknown block scale kind";
  else if (rule.ue8m0Rounding < Fp8UE8M0RoundingRoundUp ||
           rule.ue8m0Rounding > Fp8UE8M0RoundingOCP)
    result->error = "unknown UE8M0 rounding";
  else if (!x && rows * cols != 0)
    result->error = "no input";
  if (!result->error.empty())
    return {result};
  // The transposed output quantizes a cols x rows matrix.
  int64_t checkRows = transposed ? cols : rows;
  int64_t checkCols = transposed ? rows : cols;
  result->error =
      checkQuantizeArguments(checkRows, checkCols, toFormat(format),
                             toGranularity(granularity), toScaleRule(rule));
  if (!result->error.empty())
    return {result};
  result->tensor =
      transposed
          ? quantizeTransposed(x, rows, cols, toFormat(format),
                               toGranularity(granularity), toScaleRule(rule))
          : quantize(x, rows, cols, toFormat(format),
                     toGranularity(granularity), toScaleRule(rule));
  return {result};
}

MlirStringRef fp8QuantizedTensorGetError(Fp8QuantizedTensor t) {
  const std::string &error = unwrap(t)->error;
  return mlirStringRefCreate(error.data(), error.size());
}

int64_t fp8QuantizedTensorGetRows(Fp8QuantizedTensor t) {
  return unwrap(t)->tensor.rows;
}

int64_t fp8QuantizedTensorGetCols(Fp8QuantizedTensor t) {
  return unwrap(t)->tensor.cols;
}

const uint8_t *fp8QuantizedTensorGetData(Fp8QuantizedTensor t) {
  return unwrap(t)->tensor.data.data();
}

int64_t fp8QuantizedTensorGetScaleRows(Fp8QuantizedTensor t) {
  return unwrap(t)->tensor.scaleRows;
}

int64_t fp8QuantizedTensorGetScaleCols(Fp8QuantizedTensor t) {
  return unwrap(t)->tensor.scaleCols;
}

const float *fp8QuantizedTensorGetScaleInv(Fp8QuantizedTensor t) {
  const QuantizedTensor &q = unwrap(t)->tensor;
  return q.isMX() ? nullptr : q.scaleInv.data();
}

const uint8_t *fp8QuantizedTensorGetScaleE8M0(Fp8QuantizedTensor t) {
  const QuantizedTensor &q = unwrap(t)->tensor;
  return q.isMX() ? q.scaleE8m0.data() : nullptr;
}

float fp8QuantizedTensorGetAmax(Fp8QuantizedTensor t) {
  return unwrap(t)->tensor.amax;
}

void fp8QuantizedTensorDestroy(Fp8QuantizedTensor t) { delete unwrap(t); }

void fp8NumericsEncode(Fp8NumericsFormat format, const float *x,
                       uint8_t *codes, size_t n) {
  for (size_t i = 0; i < n; ++i)
    codes[i] = encodeSatFinite(toFormat(format), x[i]);
}

void fp8NumericsDecode(Fp8NumericsFormat format, const uint8_t *codes,
                       float *x, size_t n) {
  for (size_t i = 0; i < n; ++i)
    x[i] = decode(toFormat(format), codes[i]);
}

float fp8NumericsHistoryAmax(const float *history, size_t length,
                             Fp8AmaxComputeAlgo algo) {
  return historyAmax(history, length, static_cast<AmaxComputeAlgo>(algo));
}

float fp8NumericsDelayedScalingScale(float amax, float previousScale,
                                     Fp8NumericsFormat format, int margin) {
  return delayedScalingScale(amax, previousScale, toFormat(format), margin);
}

//===- FP8Folders.cpp - Constant folding of fp8 ops -----------------------===//
//
// Every folder evaluates the op with the FP8Numerics library, the one
// definition of the recipes' arithmetic, so folded constants are bit-identical
// to what the reference and the GPU kernels produce. Folding is exact (it is a
// deterministic evaluation), so it is sound even for the lossy quantize: what
// is never done is rewriting dequantize(quantize(x)) into x.
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Numerics/Reference.h"
#include "FP8/Numerics/Scaling.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fp8;
namespace num = ::fp8::numerics;

/// Constant inputs larger than this are left alone: folding allocates a few
/// copies of the tensor on the host.
static constexpr int64_t kMaxFoldedElements = int64_t(1) << 26;

/// The values of a float constant as f32 (bf16/f16 widen exactly).
static std::optional<std::vector<float>> getF32Values(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseFPElementsAttr>(attr);
  if (!dense || dense.getNumElements() > kMaxFoldedElements)
    return std::nullopt;
  std::vector<float> values;
  values.reserve(dense.getNumElements());
  for (APFloat v : dense.getValues<APFloat>()) {
    bool losesInfo = false;
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &losesInfo);
    values.push_back(v.convertToFloat());
  }
  return values;
}

/// The raw 8-bit codes of an fp8 (or UE8M0) constant.
static std::optional<std::vector<uint8_t>> getCodes(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseFPElementsAttr>(attr);
  if (!dense || dense.getNumElements() > kMaxFoldedElements)
    return std::nullopt;
  std::vector<uint8_t> codes;
  codes.reserve(dense.getNumElements());
  for (APFloat v : dense.getValues<APFloat>())
    codes.push_back(v.bitcastToAPInt().getZExtValue());
  return codes;
}

static DenseElementsAttr getF32Attr(ShapedType type, ArrayRef<float> values) {
  return DenseElementsAttr::get(
      type, llvm::map_to_vector(values, [](float v) { return APFloat(v); }));
}

/// A constant of an 8-bit float type from its codes.
static DenseElementsAttr getCodeAttr(ShapedType type, ArrayRef<uint8_t> codes) {
  ArrayRef<char> raw(reinterpret_cast<const char *>(codes.data()), codes.size());
  return DenseElementsAttr::getFromRawBuffer(type, raw);
}

/// A constant of `type` (f32, bf16 or f16 elements) holding `values` rounded
/// to the element type with RNE.
static DenseElementsAttr getHighPrecisionAttr(ShapedType type,
                                              ArrayRef<float> values) {
  Type elem = type.getElementType();
  if (elem.isF32())
    return getF32Attr(type, values);
  std::vector<uint16_t> bits;
  bits.reserve(values.size());
  for (float v : values)
    bits.push_back(elem.isBF16() ? num::floatToBf16(v) : num::floatToF16(v));
  ArrayRef<char> raw(reinterpret_cast<const char *>(bits.data()),
                     bits.size() * sizeof(uint16_t));
  return DenseElementsAttr::getFromRawBuffer(type, raw);
}

static num::Format getFormat(Type fp8Type) {
  return isa<Float8E5M2Type>(fp8Type) ? num::Format::E5M2 : num::Format::E4M3;
}

static num::Granularity getNumericsGranularity(GranularityAttr g) {
  switch (g.getKind()) {
  case GranularityKind::Tensor:
    return num::Granularity::tensor();
  case GranularityKind::Row:
    return num::Granularity::row();
  case GranularityKind::Tile:
    return num::Granularity::tile(g.getTile().rows, g.getTile().cols);
  case GranularityKind::MX:
    return num::Granularity::mx(g.getTile().cols);
  }
  llvm_unreachable("unknown granularity kind");
}

/// Logical rows x cols of a tensor: 2-D as is, any other rank flattened into
/// one row (only per-tensor granularity accepts those).
static std::pair<int64_t, int64_t> getMatrixExtents(ShapedType type) {
  if (type.getRank() == 2)
    return {type.getDimSize(0), type.getDimSize(1)};
  return {1, type.getNumElements()};
}

//===----------------------------------------------------------------------===//
// AmaxOp, ComputeScaleOp, UpdateAmaxHistoryOp
//===----------------------------------------------------------------------===//

OpFoldResult AmaxOp::fold(FoldAdaptor adaptor) {
  std::optional<std::vector<float>> values = getF32Values(adaptor.getInput());
  if (!values)
    return {};
  return getF32Attr(getType(), {num::amax(values->data(), values->size())});
}

LogicalResult ComputeScaleOp::fold(FoldAdaptor adaptor,
                                   SmallVectorImpl<OpFoldResult> &results) {
  std::optional<std::vector<float>> amax = getF32Values(adaptor.getAmax());
  if (!amax)
    return failure();
  num::Format format = getFormat(getElementType());
  auto scalarType = getScale().getType();

  if (auto current = dyn_cast<CurrentScalingAttr>(getRecipe())) {
    float scale = num::currentScalingScale(
        amax->front(), format, current.getEpsilon().convertToFloat(),
        current.getPow2());
    results.push_back(getF32Attr(scalarType, {scale}));
    results.push_back(getF32Attr(scalarType, {num::scaleInverse(scale)}));
    return success();
  }

  auto delayed = cast<DelayedScalingAttr>(getRecipe());
  std::optional<std::vector<float>> previous =
      getF32Values(adaptor.getPreviousScale());
  if (!previous)
    return failure();
  std::vector<float> history = std::move(*amax);
  auto algo = delayed.getAlgo() == AmaxComputeAlgo::Max
                  ? num::AmaxComputeAlgo::Max
                  : num::AmaxComputeAlgo::MostRecent;
  float scale = num::delayedScalingScale(
      num::historyAmax(history.data(), history.size(), algo),
      previous->front(), format, delayed.getMargin());
  num::rollAmaxHistory(history.data(), history.size());
  results.push_back(getF32Attr(scalarType, {scale}));
  results.push_back(getF32Attr(scalarType, {num::scaleInverse(scale)}));
  results.push_back(getF32Attr(getAmax().getType(), history));
  return success();
}

OpFoldResult UpdateAmaxHistoryOp::fold(FoldAdaptor adaptor) {
  std::optional<std::vector<float>> history =
      getF32Values(adaptor.getHistory());
  std::optional<std::vector<float>> amax = getF32Values(adaptor.getAmax());
  if (!history || !amax)
    return {};
  num::recordAmax(history->data(), amax->front());
  return getF32Attr(getType(), *history);
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

/// The numerics library's rule for this op, or nullopt if the scale operand
/// is needed and not constant.
static std::optional<num::ScaleRule> getScaleRule(QuantizeOp op,
                                                  Attribute scaleAttr) {
  if (op.getScale()) {
    std::optional<std::vector<float>> scale = getF32Values(scaleAttr);
    if (!scale)
      return std::nullopt;
    return num::ScaleRule::delayed(scale->front());
  }
  return llvm::TypeSwitch<Attribute, std::optional<num::ScaleRule>>(
             op.getRecipe())
      .Case([](CurrentScalingAttr r) {
        return num::ScaleRule::current(r.getEpsilon().convertToFloat(),
                                       r.getPow2());
      })
      .Case([](BlockwiseScalingAttr r) {
        return num::ScaleRule::blockwise(
            r.getScales() == BlockScaleKind::PowerOfTwo
                ? num::BlockScaleKind::PowerOfTwo
                : num::BlockScaleKind::Float32,
            r.getAmaxClamp().convertToFloat());
      })
      .Case([](MXScalingAttr r) {
        return num::ScaleRule::mx(r.getRounding() == UE8M0Rounding::RoundUp
                                      ? num::Ue8m0Rule::RoundUp
                                      : num::Ue8m0Rule::Ocp);
      })
      .Default([](Attribute) { return std::nullopt; });
}

/// The scale_inv constant of `q` in `type` (f32, or UE8M0 codes).
static DenseElementsAttr getScaleInvAttr(ShapedType type,
                                         const num::QuantizedTensor &q) {
  if (q.isMX())
    return getCodeAttr(type, q.scaleE8m0);
  if (type.getElementType().isF32())
    return getF32Attr(type, q.scaleInv);
  // Power-of-two blockwise scales stored as UE8M0: the f32 exponent field.
  std::vector<uint8_t> codes;
  for (float s : q.scaleInv) {
    uint32_t bits = num::floatBits(s);
    if ((bits & 0x807FFFFFu) != 0 || (bits >> 23) == 0)
      return {}; // not a positive normal power of two
    codes.push_back(bits >> 23);
  }
  return getCodeAttr(type, codes);
}

LogicalResult QuantizeOp::fold(FoldAdaptor adaptor,
                               SmallVectorImpl<OpFoldResult> &results) {
  auto inputType = getInput().getType();
  // The folder produces scales at the op's granularity only, of matrices.
  if (!inputType.hasStaticShape() || getScaleGranularityAttr() ||
      inputType.getRank() == 3)
    return failure();
  std::optional<std::vector<float>> input = getF32Values(adaptor.getInput());
  if (!input)
    return failure();
  std::optional<num::ScaleRule> rule = getScaleRule(*this, adaptor.getScale());
  if (!rule)
    return failure();
  auto [rows, cols] = getMatrixExtents(inputType);
  Type dataElem = getRowwise() ? getRowwise().getType().getElementType()
                               : getColumnwise().getType().getElementType();
  num::Format format = getFormat(dataElem);
  num::Granularity granularity = getNumericsGranularity(getGranularity());
  if (!num::checkQuantizeArguments(rows, cols, format, granularity, *rule)
           .empty())
    return failure();

  SmallVector<Attribute> folded;
  float amax = 0.f;
  if (getRowwise()) {
    num::QuantizedTensor q =
        num::quantize(input->data(), rows, cols, format, granularity, *rule);
    folded.push_back(getCodeAttr(getRowwise().getType(), q.data));
    folded.push_back(getScaleInvAttr(getRowwiseScaleInv().getType(), q));
    amax = q.amax;
  }
  if (getColumnwise()) {
    if (!num::checkQuantizeArguments(cols, rows, format, granularity, *rule)
             .empty())
      return failure();
    num::QuantizedTensor q = num::quantizeTransposed(
        input->data(), rows, cols, format, granularity, *rule);
    bool transposed = getColumnwiseLayout() == ColumnwiseLayout::Transposed;
    folded.push_back(getCodeAttr(getColumnwise().getType(),
                                 transposed ? q.data : num::transposedData(q)));
    folded.push_back(getScaleInvAttr(getColumnwiseScaleInv().getType(), q));
    amax = q.amax;
  }
  if (getAmax())
    folded.push_back(getF32Attr(getAmax().getType(), {amax}));
  if (llvm::any_of(folded, [](Attribute a) { return !a; }))
    return failure();
  results.append(folded.begin(), folded.end());
  return success();
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

OpFoldResult DequantizeOp::fold(FoldAdaptor adaptor) {
  auto inputType = getInput().getType();
  if (!inputType.hasStaticShape())
    return {};
  std::optional<std::vector<uint8_t>> codes = getCodes(adaptor.getInput());
  if (!codes)
    return {};
  num::QuantizedTensor q;
  std::tie(q.rows, q.cols) = getMatrixExtents(inputType);
  q.format = getFormat(inputType.getElementType());
  q.granularity = getNumericsGranularity(getGranularity());
  num::GridShape grid = q.granularity.scaleGrid(q.rows, q.cols);
  q.scaleRows = grid.rows;
  q.scaleCols = grid.cols;
  q.data = std::move(*codes);
  if (isa<Float8E8M0FNUType>(getScaleInv().getType().getElementType())) {
    std::optional<std::vector<uint8_t>> scales =
        getCodes(adaptor.getScaleInv());
    if (!scales)
      return {};
    if (q.granularity.kind == num::Granularity::MX) {
      q.scaleE8m0 = std::move(*scales);
    } else {
      for (uint8_t e : *scales)
        q.scaleInv.push_back(num::decodeUe8m0(e));
    }
  } else {
    std::optional<std::vector<float>> scales =
        getF32Values(adaptor.getScaleInv());
    if (!scales)
      return {};
    q.scaleInv = std::move(*scales);
  }
  return getHighPrecisionAttr(getType(), num::dequantize(q));
}

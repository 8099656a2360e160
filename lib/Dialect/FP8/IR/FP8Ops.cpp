//===- FP8Ops.cpp - FP8 dialect operations: verifiers, canonicalization ---===//

#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/IR/FP8Contract.h"
#include "FP8ResultVerifier.h"
#include "ShapeCompatibility.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <array>

using namespace mlir;
using namespace mlir::fp8;

//===----------------------------------------------------------------------===//
// Shared verification helpers
//===----------------------------------------------------------------------===//

using contract::formatShape;
using mlir::fp8::detail::isCompatibleShape;

static std::string formatRecipe(RecipeAttrInterface recipe) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << recipe;
  return s;
}

bool mlir::fp8::detail::isCompatibleShape(ArrayRef<int64_t> actual,
                                          ArrayRef<int64_t> expected) {
  if (actual.size() != expected.size())
    return false;
  for (auto [a, e] : llvm::zip_equal(actual, expected))
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(e) && a != e)
      return false;
  return true;
}

static StringRef describeGranularityChoices(RecipeAttrInterface recipe) {
  return llvm::TypeSwitch<Attribute, StringRef>(recipe)
      .Case<DelayedScalingAttr>([](auto) { return "tensor"; })
      .Case<CurrentScalingAttr>([](auto) { return "tensor or row"; })
      .Case<BlockwiseScalingAttr>(
          [](auto) { return "the recipe's act or weight tile"; })
      .Case<MXScalingAttr>([](auto) { return "mx 1x32"; })
      .Default([](auto) { return "?"; });
}

/// Checks the element type and the logical shape of the scale_inv tensor of a
/// `rows x cols` operand quantized at `granularity`. `recipe` may be null.
static LogicalResult verifyScaleTensor(Operation *op, StringRef name,
                                       GranularityAttr granularity,
                                       int64_t rows, int64_t cols,
                                       Type scaleType,
                                       RecipeAttrInterface recipe,
                                       ArrayRef<int64_t> outerDims = {}) {
  auto tensorType = cast<ShapedType>(scaleType);
  Type elem = tensorType.getElementType();
  bool isE8M0 = isa<Float8E8M0FNUType>(elem);
  if (granularity.isMX() && !isE8M0)
    return op->emitOpError() << "expected " << name
                             << " of element type f8E8M0FNU (UE8M0 MX "
                                "scales), got "
                             << elem;
  if (granularity.isEpilogueScaled() && isE8M0)
    return op->emitOpError()
           << "expected " << name << " of element type f32 for granularity "
           << granularity.describe() << ", got " << elem;
  if (granularity.isTile() && isE8M0) {
    auto blockwise = dyn_cast_or_null<BlockwiseScalingAttr>(recipe);
    if (blockwise && blockwise.getScales() != BlockScaleKind::PowerOfTwo)
      return op->emitOpError()
             << "expected " << name
             << " of element type f32: f8E8M0FNU holds only power-of-two "
                "scales, and the recipe has scales = f32";
  }
  SmallVector<int64_t> expected = granularity.getScaleShape(rows, cols);
  // Scales of several matrices (the groups of a grouped GEMM's result, a
  // batch of expert weights) have their extents outermost; a per-tensor
  // scale is one for all.
  if (!expected.empty())
    expected.insert(expected.begin(), outerDims.begin(), outerDims.end());
  if (!isCompatibleShape(tensorType.getShape(), expected))
    return op->emitOpError()
           << "expected " << name << " of shape " << formatShape(expected)
           << " (granularity " << granularity.describe() << " of "
           << (outerDims.empty()
                   ? "a " + formatShape({rows, cols}) + " operand"
                   : "each " + formatShape({rows, cols}) + " matrix")
           << "), got " << formatShape(tensorType.getShape());
  return success();
}

static LogicalResult verifyElementTypeForRecipe(Operation *op, StringRef name,
                                                Type elem,
                                                RecipeAttrInterface recipe) {
  if (recipe.isAllowedElementType(elem))
    return success();
  return op->emitOpError() << "element type " << elem << " of " << name
                           << " is not allowed by recipe "
                           << formatRecipe(recipe) << ": expected "
                           << recipe.getAllowedElementTypesDescription();
}

//===----------------------------------------------------------------------===//
// ComputeScaleOp
//===----------------------------------------------------------------------===//

LogicalResult ComputeScaleOp::verify() {
  RecipeAttrInterface recipe = getRecipe();
  if (failed(verifyElementTypeForRecipe(*this, "element_type",
                                        getElementType(), recipe)))
    return failure();
  auto amaxType = getAmax().getType();
  if (auto delayed = dyn_cast<DelayedScalingAttr>(recipe)) {
    if (amaxType.getRank() != 1 ||
        !isCompatibleShape(amaxType.getShape(), {delayed.getHistory()}))
      return emitOpError() << "expected an amax history of shape ["
                           << delayed.getHistory()
                           << "] (the recipe's history length), got "
                           << formatShape(amaxType.getShape());
    if (!getPreviousScale())
      return emitOpError() << "delayed scaling requires previous_scale (kept "
                              "when the history's amax is zero or not finite)";
    if (!getNextHistory() || getNextHistory().getType() != amaxType)
      return emitOpError() << "delayed scaling expects a next_history result "
                              "of type "
                           << amaxType;
    return success();
  }
  if (isa<CurrentScalingAttr>(recipe)) {
    if (amaxType.getRank() != 0)
      return emitOpError() << "current scaling expects a tensor<f32> amax, got "
                           << amaxType;
    if (getPreviousScale())
      return emitOpError() << "previous_scale is only used by delayed scaling";
    if (getNextHistory())
      return emitOpError() << "next_history is only produced by delayed "
                              "scaling";
    return success();
  }
  return emitOpError() << "computes per-tensor scales (#fp8.delayed, "
                          "#fp8.current); blockwise and MXFP8 scales are "
                          "computed per block by fp8.quantize";
}

//===----------------------------------------------------------------------===//
// UpdateAmaxHistoryOp
//===----------------------------------------------------------------------===//

LogicalResult UpdateAmaxHistoryOp::verify() {
  auto delayed = dyn_cast<DelayedScalingAttr>(getRecipe());
  if (!delayed)
    return emitOpError() << "expected a #fp8.delayed recipe (only delayed "
                            "scaling keeps an amax history)";
  if (!isCompatibleShape(getHistory().getType().getShape(),
                         {delayed.getHistory()}))
    return emitOpError() << "expected an amax history of shape ["
                         << delayed.getHistory()
                         << "] (the recipe's history length), got "
                         << formatShape(getHistory().getType().getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  RecipeAttrInterface recipe = getRecipe();
  GranularityAttr granularity = getGranularity();
  auto inputType = getInput().getType();

  if (!getRowwise() && !getColumnwise())
    return emitOpError() << "expected at least one of the rowwise and "
                            "columnwise outputs";
  if (!getRowwise() != !getRowwiseScaleInv())
    return emitOpError() << "expected the rowwise data and rowwise_scale_inv "
                            "results together";
  if (!getColumnwise() != !getColumnwiseScaleInv())
    return emitOpError() << "expected the columnwise data and "
                            "columnwise_scale_inv results together";

  if (!recipe.isAllowedGranularity(granularity))
    return emitOpError() << "granularity " << granularity.describe()
                         << " is not allowed by recipe " << formatRecipe(recipe)
                         << ": expected " << describeGranularityChoices(recipe);

  bool isDelayed = isa<DelayedScalingAttr>(recipe);
  if (isDelayed && !getScale())
    return emitOpError() << "delayed scaling requires a scale operand (from "
                            "fp8.compute_scale of the previous step)";
  if (getScale() && !granularity.isTensor())
    return emitOpError() << "a scale operand is only accepted for per-tensor "
                            "granularity; granularity "
                         << granularity.describe()
                         << " computes one scale per block";
  if (getAmax() && !granularity.isTensor())
    return emitOpError() << "an amax result is only produced for per-tensor "
                            "granularity";

  // Scales given at a finer granularity than the blocks they belong to:
  // power-of-two blockwise tiles repeated over MX blocks, as UE8M0.
  GranularityAttr scaleGranularity = granularity;
  if (GranularityAttr finer = getScaleGranularityAttr()) {
    auto blockwise = dyn_cast<BlockwiseScalingAttr>(recipe);
    if (!finer.isMX() || finer.getTile().cols != 32)
      return emitOpError() << "expected scale_granularity mx 1x32, got "
                           << finer.describe();
    if (!granularity.isTile() || granularity.getTile().cols % 32 != 0)
      return emitOpError() << "scale_granularity mx 1x32 expects tiles whose "
                              "K extent is a multiple of 32, got "
                           << granularity.describe();
    if (!blockwise || blockwise.getScales() != BlockScaleKind::PowerOfTwo)
      return emitOpError() << "scale_granularity mx 1x32 expects "
                              "#fp8.blockwise<scales = pow2> (UE8M0 holds "
                              "power-of-two scales only), got "
                           << formatRecipe(recipe);
    scaleGranularity = finer;
  }

  // A 3-D input [G, R, C] with square tiles is a batch of G matrices
  // quantized each on its own (expert weights): a columnwise output is each
  // matrix's transpose with the same blocks. Other 3-D inputs need a matrix.
  bool batched = inputType.getRank() == 3 && granularity.isTile() &&
                 granularity.getTile().rows == granularity.getTile().cols &&
                 !getScaleGranularityAttr();
  bool needsMatrix = !granularity.isTensor() || getColumnwise();
  if (needsMatrix && inputType.getRank() != 2 && !batched)
    return emitOpError() << "expected a 2-D input for "
                         << (getColumnwise() ? "a columnwise output"
                                             : "granularity " +
                                                   granularity.describe())
                         << ", got rank " << inputType.getRank();

  ArrayRef<int64_t> shape = inputType.getShape();
  ArrayRef<int64_t> batch = batched ? shape.take_front() : ArrayRef<int64_t>();
  // The matrix (of each batch entry); per-tensor: any shape, one scale.
  int64_t rows = needsMatrix ? shape[shape.size() - 2] : 1;
  int64_t cols = needsMatrix ? shape[shape.size() - 1] : 1;
  Type dataElem;
  if (Value rowwise = getRowwise()) {
    auto type = cast<RankedTensorType>(rowwise.getType());
    if (!isCompatibleShape(type.getShape(), shape))
      return emitOpError() << "expected rowwise data of shape "
                           << formatShape(shape) << " (the input's), got "
                           << formatShape(type.getShape());
    dataElem = type.getElementType();
    if (failed(verifyElementTypeForRecipe(*this, "rowwise data", dataElem,
                                          recipe)))
      return failure();
    if (shape.size() == 2 || batched) {
      rows = shape[shape.size() - 2];
      cols = shape[shape.size() - 1];
    }
    if (failed(verifyScaleTensor(*this, "rowwise_scale_inv", scaleGranularity,
                                 rows, cols, getRowwiseScaleInv().getType(),
                                 recipe, batch)))
      return failure();
  }
  if (Value columnwise = getColumnwise()) {
    auto type = cast<RankedTensorType>(columnwise.getType());
    bool transposed = getColumnwiseLayout() == ColumnwiseLayout::Transposed;
    SmallVector<int64_t> expected(shape);
    if (transposed)
      std::swap(expected[expected.size() - 2], expected.back());
    if (!isCompatibleShape(type.getShape(), expected))
      return emitOpError() << "expected columnwise data of shape "
                           << formatShape(expected) << " ("
                           << (transposed ? "the transposed input"
                                          : "the input's, untransposed")
                           << "), got " << formatShape(type.getShape());
    if (dataElem && dataElem != type.getElementType())
      return emitOpError() << "expected rowwise and columnwise data of the "
                              "same element type, got "
                           << dataElem << " and " << type.getElementType();
    if (failed(verifyElementTypeForRecipe(*this, "columnwise data",
                                          type.getElementType(), recipe)))
      return failure();
    // The columnwise output quantizes the transposed input.
    if (failed(verifyScaleTensor(*this, "columnwise_scale_inv",
                                 scaleGranularity, cols, rows,
                                 getColumnwiseScaleInv().getType(), recipe,
                                 batch)))
      return failure();
  }
  return success();
}

namespace {
/// Drops outputs of fp8.quantize nobody reads (the rowwise or the columnwise
/// pair, the amax), so later lowering does not produce them.
struct DropUnusedQuantizeOutputs : public OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto unused = [](Value v) { return v && v.use_empty(); };
    bool keepRowwise = op.getRowwise() && !(unused(op.getRowwise()) &&
                                            unused(op.getRowwiseScaleInv()));
    bool keepColumnwise =
        op.getColumnwise() &&
        !(unused(op.getColumnwise()) && unused(op.getColumnwiseScaleInv()));
    bool keepAmax = op.getAmax() && !unused(op.getAmax());
    // An op with no used result is dead and left to DCE.
    if (!keepRowwise && !keepColumnwise)
      return failure();
    if (keepRowwise == bool(op.getRowwise()) &&
        keepColumnwise == bool(op.getColumnwise()) &&
        keepAmax == bool(op.getAmax()))
      return failure();

    auto typeIf = [](bool keep, Value v) { return keep ? v.getType() : Type(); };
    auto newOp = QuantizeOp::create(
        rewriter, op.getLoc(), typeIf(keepRowwise, op.getRowwise()),
        typeIf(keepRowwise, op.getRowwiseScaleInv()),
        typeIf(keepColumnwise, op.getColumnwise()),
        typeIf(keepColumnwise, op.getColumnwiseScaleInv()),
        typeIf(keepAmax, op.getAmax()), op.getInput(), op.getScale(),
        op.getRecipe(), op.getGranularity(), op.getColumnwiseLayout(),
        op.getScaleGranularityAttr());
    auto replaceIf = [&](bool keep, Value oldValue, Value newValue) {
      if (keep)
        rewriter.replaceAllUsesWith(oldValue, newValue);
    };
    replaceIf(keepRowwise, op.getRowwise(), newOp.getRowwise());
    replaceIf(keepRowwise, op.getRowwiseScaleInv(), newOp.getRowwiseScaleInv());
    replaceIf(keepColumnwise, op.getColumnwise(), newOp.getColumnwise());
    replaceIf(keepColumnwise, op.getColumnwiseScaleInv(),
              newOp.getColumnwiseScaleInv());
    replaceIf(keepAmax, op.getAmax(), newOp.getAmax());
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void QuantizeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *context) {
  results.add<DropUnusedQuantizeOutputs>(context);
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

LogicalResult DequantizeOp::verify() {
  GranularityAttr granularity = getGranularity();
  auto inputType = getInput().getType();
  if (inputType.getShape() != getResult().getType().getShape())
    return emitOpError() << "expected a result of the input's shape "
                         << formatShape(inputType.getShape()) << ", got "
                         << formatShape(getResult().getType().getShape());
  if (!granularity.isTensor() && inputType.getRank() != 2)
    return emitOpError() << "expected a 2-D input for granularity "
                         << granularity.describe() << ", got rank "
                         << inputType.getRank();
  int64_t rows = inputType.getRank() == 2 ? inputType.getDimSize(0) : 1;
  int64_t cols = inputType.getRank() == 2 ? inputType.getDimSize(1) : 1;
  return verifyScaleTensor(*this, "scale_inv", granularity, rows, cols,
                           getScaleInv().getType(), /*recipe=*/nullptr);
}

//===----------------------------------------------------------------------===//
// ScalesToMXOp
//===----------------------------------------------------------------------===//

LogicalResult ScalesToMXOp::verify() {
  GranularityAttr granularity = getGranularity();
  if (!granularity.isTile() || granularity.getTile().cols % 32 != 0)
    return emitOpError() << "expected blockwise tiles whose K extent is a "
                            "multiple of 32 (the MX block), got "
                         << granularity.describe();
  TileShape tile = granularity.getTile();
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> result = getResult().getType().getShape();
  int64_t rows = result[0], mxBlocks = result[1];
  if (ShapedType::isDynamic(mxBlocks))
    return emitOpError() << "expected a static number of MX blocks per row";
  if (ShapedType::isDynamic(rows) && tile.rows != 1)
    return emitOpError() << "expected a static row count R for "
                         << granularity.describe()
                         << " (only 1-row tiles give R from the scales)";
  // ceil(C / Kb) = ceil(ceil(C / 32) / (Kb / 32)), Kb being a multiple of 32.
  SmallVector<int64_t> expected = {
      ShapedType::isDynamic(rows)
          ? ShapedType::kDynamic
          : static_cast<int64_t>(llvm::divideCeil(rows, tile.rows)),
      static_cast<int64_t>(llvm::divideCeil(mxBlocks, tile.cols / 32))};
  if (!isCompatibleShape(input, expected) ||
      (tile.rows == 1 && ShapedType::isDynamic(rows) !=
                             ShapedType::isDynamic(input[0])))
    return emitOpError() << "expected the " << granularity.describe()
                         << " scales of an [R, C] = " << formatShape(
                                {rows, ShapedType::kDynamic})
                         << " operand with ceil(C/32) = " << mxBlocks
                         << " to have shape " << formatShape(expected)
                         << ", got " << formatShape(input);
  return success();
}

//===----------------------------------------------------------------------===//
// ScaledMatmulOp
//===----------------------------------------------------------------------===//

static ShapedType shapedType(Value v) { return cast<ShapedType>(v.getType()); }

static bool isFP8Tensor(Type type) {
  auto shaped = dyn_cast_or_null<ShapedType>(type);
  return shaped && isa<Float8E4M3FNType, Float8E5M2Type>(shaped.getElementType());
}

/// `D`, `(D, amax)`, `(D, scale_inv)` / `(D, scale_inv, amax)` (FP8 D) or
/// `()`: the result part of scaled_matmul's function type.
static ParseResult parseScaledMatmulResults(OpAsmParser &parser, Type &result,
                                            Type &scaleInv, Type &amax) {
  if (failed(parser.parseOptionalLParen()))
    return parser.parseType(result);
  if (succeeded(parser.parseOptionalRParen()))
    return success();
  SmallVector<Type, 3> types;
  if (parser.parseTypeList(types) || parser.parseRParen())
    return failure();
  bool fp8 = isFP8Tensor(types.front());
  if (types.size() < 2 || types.size() > (fp8 ? 3u : 2u))
    return parser.emitError(parser.getCurrentLocation())
           << "expected `(D, amax)`, `(D, scale_inv)` or `(D, scale_inv, "
              "amax)` (the last two for an FP8 D), got "
           << types.size() << " types";
  result = types[0];
  (fp8 ? scaleInv : amax) = types[1];
  if (types.size() == 3)
    amax = types[2];
  return success();
}

static void printScaledMatmulResults(OpAsmPrinter &printer, Operation *,
                                     Type result, Type scaleInv, Type amax) {
  if (!result) {
    printer << "()";
    return;
  }
  if (!scaleInv && !amax) {
    printer << result;
    return;
  }
  printer << "(" << result;
  if (scaleInv)
    printer << ", " << scaleInv;
  if (amax)
    printer << ", " << amax;
  printer << ")";
}

int64_t ScaledMatmulOp::getM() {
  return shapedType(getA()).getDimSize(getAMajor() == OperandMajor::K ? 0 : 1);
}
int64_t ScaledMatmulOp::getN() {
  return shapedType(getB()).getDimSize(getBMajor() == OperandMajor::K ? 0 : 1);
}
int64_t ScaledMatmulOp::getK() {
  return shapedType(getA()).getDimSize(getAMajor() == OperandMajor::K ? 1 : 0);
}

void ScaledMatmulOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // On tensors the op is pure; on memrefs it reads its operands and writes D.
  if (!hasBufferSemantics())
    return;
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    // The amax buffer is max-accumulated into: read and written.
    bool isAmax = getAmaxOut() && &operand == &getAmaxOutMutable()[0];
    if (&operand != &getOutMutable()[0])
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
    if (isAmax || &operand == &getOutMutable()[0])
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

/// The destination-passing form reads and writes plain buffers: dense
/// row-major (the identity layout) in global memory, D and the amax in
/// buffers of their own.
static LogicalResult verifyBuffers(ScaledMatmulOp op) {
  std::pair<StringRef, Value> operands[] = {
      {"A", op.getA()},
      {"B", op.getB()},
      {"a_scale_inv", op.getAScaleInv()},
      {"b_scale_inv", op.getBScaleInv()},
      {"bias", op.getBias()},
      {"accumulate_into (C)", op.getC()},
      {"outs (D)", op.getOut()},
      {"amax_outs", op.getAmaxOut()}};
  for (auto [name, value] : operands) {
    if (!value)
      continue;
    auto type = cast<MemRefType>(value.getType());
    if (!type.getLayout().isIdentity())
      return op.emitOpError()
             << name << " is " << type
             << ": the kernels read dense row-major buffers (the identity "
                "layout) and take no strides; copy it into a contiguous "
                "buffer (memref.alloc + memref.copy) first";
    if (type.getMemorySpace())
      return op.emitOpError()
             << name << " is " << type
             << ", in a memory space: the kernels read and write global "
                "memory, a memref with no memory space";
  }
  for (auto [name, value] : ArrayRef(operands).drop_back(2))
    if (value && (value == op.getOut() || value == op.getAmaxOut()))
      return op.emitOpError()
             << name << " is also an output buffer ("
             << (value == op.getOut() ? "outs" : "amax_outs")
             << "): the kernel reads its operands while it writes its "
                "outputs, so each output needs a buffer of its own";
  if (op.getAmaxOut() && op.getAmaxOut() == op.getOut())
    return op.emitOpError() << "expected different buffers for outs and "
                               "amax_outs";
  return success();
}

/// An FP8 D comes with its quantization (result_recipe, result_granularity,
/// result_scale_inv, and result_scale where the recipe takes a given scale);
/// any other D with none of them. Shared by scaled_matmul and
/// grouped_scaled_matmul.
LogicalResult mlir::fp8::detail::verifyFP8Result(Operation *op,
                                                 const FP8ResultForm &form) {
  RecipeAttrInterface recipe = form.recipe;
  GranularityAttr g = form.granularity;
  Value scale = form.scale, scaleInv = form.scaleInv;
  auto floatType = dyn_cast<FloatType>(form.elementType);
  if (!floatType || floatType.getWidth() != 8) {
    if (recipe || g || scale || scaleInv)
      return op->emitOpError()
             << "result_recipe, result_granularity, result_scale and the "
                "result's scale_inv belong to an FP8 result (f8E4M3FN or "
                "f8E5M2), got a result of element type "
             << form.elementType;
    return success();
  }
  if (!recipe || !g || !scaleInv)
    return op->emitOpError()
           << "an FP8 result needs result_recipe and result_granularity (how "
              "its consumer quantizes it) and its scale_inv as the second "
              "result";
  if (!recipe.isAllowedGranularity(g))
    return op->emitOpError() << "result granularity " << g.describe()
                             << " is not allowed by result recipe "
                             << formatRecipe(recipe) << ": expected "
                             << describeGranularityChoices(recipe);
  if (failed(verifyElementTypeForRecipe(op, "the result", form.elementType,
                                        recipe)))
    return failure();
  bool delayed = isa<DelayedScalingAttr>(recipe);
  bool givenScaleAllowed =
      delayed || (isa<CurrentScalingAttr>(recipe) && g.isTensor());
  if (delayed && !scale)
    return op->emitOpError() << "an FP8 result under delayed scaling needs "
                                "result_scale (the scale of the previous "
                                "step, from fp8.compute_scale)";
  if (scale && !givenScaleAllowed)
    return op->emitOpError()
           << "result_scale is taken with #fp8.delayed or per-tensor "
              "#fp8.current only; result recipe "
           << formatRecipe(recipe) << " at " << g.describe()
           << " computes its scales from D";
  return verifyScaleTensor(op, "the result's scale_inv", g, form.rows,
                           form.cols, scaleInv.getType(), recipe,
                           form.outerDims);
}

static LogicalResult verifyFP8Result(ScaledMatmulOp op) {
  if (op.hasBufferSemantics()) {
    if (op.getResultRecipeAttr() || op.getResultGranularityAttr())
      return op.emitOpError() << "an FP8 result (result_recipe, "
                                 "result_granularity) is produced on tensors "
                                 "only, not into an `outs` buffer";
    return success();
  }
  return mlir::fp8::detail::verifyFP8Result(
      op, {op.getResultRecipeAttr(), op.getResultGranularityAttr(),
           op.getResultScale(), op.getResultScaleInv(),
           op.getOutputType().getElementType(), op.getM(), op.getN(),
           /*outerDims=*/{}});
}

/// The three classes of scale pairs a GEMM supports.
enum class ScaleClass { Epilogue, Blockwise, MX };
static ScaleClass classify(GranularityAttr g) {
  if (g.isEpilogueScaled())
    return ScaleClass::Epilogue;
  return g.isTile() ? ScaleClass::Blockwise : ScaleClass::MX;
}

LogicalResult ScaledMatmulOp::verify() {
  // Either every operand a tensor and D the result, or every operand a
  // memref and D written into `outs`.
  bool buffers = hasBufferSemantics();
  if (buffers == static_cast<bool>(getResult()))
    return emitOpError() << "expected a result on tensors or an `outs` buffer "
                            "on memrefs, not both or neither";
  if (getAmaxOut() && !buffers)
    return emitOpError() << "expected an `amax_outs` buffer only with an "
                            "`outs` buffer";
  if (getAmax() && buffers)
    return emitOpError() << "expected the amax as an `amax_outs` buffer on "
                            "memrefs, not a result";
  for (Value operand : getOperation()->getOperands())
    if (isa<MemRefType>(operand.getType()) != buffers)
      return emitOpError() << (buffers ? "expected every operand to be a "
                                         "memref with an `outs` buffer"
                                       : "expected every operand to be a "
                                         "tensor (memrefs need an `outs` "
                                         "buffer)");
  if (buffers && failed(verifyBuffers(*this)))
    return failure();
  // A and B agree on K: checked before the generic verification
  // (verifyBeforeInvariants in FP8Contract.cpp).
  GranularityAttr ga = getAGranularity(), gb = getBGranularity();
  int64_t m = getM(), n = getN(), k = getK();
  ShapedType outType = getOutputType();
  if (!isCompatibleShape(outType.getShape(), {m, n}))
    return emitOpError() << "expected a result of shape [M, N] = "
                         << formatShape({m, n}) << ", got "
                         << formatShape(outType.getShape());

  if (classify(ga) != classify(gb))
    return emitOpError() << "expected both scale granularities per-tensor or "
                            "per-row, both blockwise tiles, or both MX; got "
                         << ga.describe() << " and " << gb.describe();
  if (ga.isTile() && ga.getTile().cols != gb.getTile().cols)
    return emitOpError() << "expected A's and B's scale tiles to span the "
                            "same K extent, got "
                         << ga.getTile().cols << " and " << gb.getTile().cols;

  RecipeAttrInterface recipe = getRecipeAttr();
  if (failed(verifyScaleTensor(*this, "a_scale_inv", ga, m, k,
                               getAScaleInv().getType(), recipe)) ||
      failed(verifyScaleTensor(*this, "b_scale_inv", gb, n, k,
                               getBScaleInv().getType(), recipe)))
    return failure();

  Accumulation accumulation = getAccumulation().getMode();
  if (ga.isTile()) {
    int64_t blockK = ga.getTile().cols;
    if (accumulation.isFast() || blockK % accumulation.promoteInterval != 0)
      return emitOpError() << "blockwise scales change every " << blockK
                           << " K elements: expected accumulation "
                              "promoted(N) with N dividing "
                           << blockK;
  }

  if (Value bias = getBias()) {
    auto biasShape = shapedType(bias).getShape();
    if (!isCompatibleShape(biasShape, {n}))
      return emitOpError() << "expected a bias of shape [N] = "
                           << formatShape({n}) << ", got "
                           << formatShape(biasShape);
  }
  if (Value c = getC()) {
    if (getActivation())
      return emitOpError() << "an activation cannot be fused with "
                              "accumulate_into (it would apply to C + AB)";
    if (!outType.getElementType().isF32())
      return emitOpError() << "accumulate_into requires an f32 result (wgrad "
                              "accumulates in f32), got "
                           << outType.getElementType();
    if (shapedType(c).getShape() != outType.getShape() ||
        shapedType(c).getElementType() != outType.getElementType())
      return emitOpError() << "expected the accumulate_into operand to have "
                              "the result type "
                           << outType << ", got " << c.getType();
  }

  if (failed(verifyFP8Result(*this)))
    return failure();

  if (recipe) {
    for (auto [name, g] : {std::pair<StringRef, GranularityAttr>{"A", ga},
                           std::pair<StringRef, GranularityAttr>{"B", gb}})
      if (!recipe.isAllowedGranularity(g))
        return emitOpError() << "granularity " << g.describe() << " of " << name
                             << " is not allowed by recipe "
                             << formatRecipe(recipe) << ": expected "
                             << describeGranularityChoices(recipe);
    if (failed(verifyElementTypeForRecipe(*this, "A",
                                          shapedType(getA()).getElementType(),
                                          recipe)) ||
        failed(verifyElementTypeForRecipe(*this, "B",
                                          shapedType(getB()).getElementType(),
                                          recipe)))
      return failure();
  }
  return success();
}

#define GET_OP_CLASSES
#include "FP8/Dialect/FP8/IR/FP8Ops.cpp.inc"

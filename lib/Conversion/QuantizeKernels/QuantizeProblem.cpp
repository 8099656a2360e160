//===- QuantizeProblem.cpp - What a quantization kernel computes ----------===//
//
// The problem an fp8.amax or fp8.quantize op poses to the quantization
// kernels (after the checks of their contract, docs/contract.md), the
// kernel's name and its shared memory.
//
//===----------------------------------------------------------------------===//

#include "FP8/Numerics/Formats.h"
#include "QuantizeEmitter.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::detail;
namespace num = ::fp8::numerics;

RowLayout mlir::fp8::detail::getRowLayout(const QuantizeProblem &p) {
  RowLayout l;
  l.loadsPerChunk = p.inputType.getIntOrFloatBitWidth() * kVector / 128;
  l.chunksPerRow = p.cols / kVector;
  int64_t maxChunks = kRowLoadsPerThread / l.loadsPerChunk;
  l.threadsPerRow = std::min<int64_t>(
      kQuantizeThreads,
      llvm::PowerOf2Ceil(llvm::divideCeil(l.chunksPerRow, maxChunks)));
  l.chunksPerThread = std::min<int64_t>(
      maxChunks, llvm::divideCeil(l.chunksPerRow, l.threadsPerRow));
  l.slabs = llvm::divideCeil(l.chunksPerRow, l.chunksPerSlab());
  l.rowsPerCta = kQuantizeThreads / l.threadsPerRow;
  return l;
}

static LogicalResult checkShape(Operation *op, const QuantizeProblem &p) {
  if (p.cols % 16 != 0)
    return op->emitOpError()
           << "the quantization kernels take C (the last dimension) a "
              "multiple of 16 (16-byte vector loads and TMA-aligned FP8 rows), "
              "got "
           << p.cols << ": pad C with zeros to a multiple of 16";
  if (p.needsTranspose() && !p.dynamicRows &&
      p.rows % kTransposedRowAlignment != 0)
    return op->emitOpError()
           << "a columnwise (transposed) output needs R a multiple of 16 "
              "(its rows are R bytes), got "
           << p.rows
           << ": pad R with zeros to a multiple of 16 (or, on sm_100a, use "
              "columnwise_layout = untransposed)";
  return success();
}

LogicalResult mlir::fp8::checkKernelMatrix(Operation *op, ShapedType type,
                                           StringRef kernels) {
  if (type.getRank() != 2)
    return op->emitOpError()
           << kernels << " take 2-D inputs, got rank " << type.getRank()
           << ": reshape the tensor to a matrix [R, C] "
              "(tensor.collapse_shape) first";
  if (type.isDynamicDim(1))
    return op->emitOpError()
           << kernels
           << " are built per static shape (a static C, the last dimension; "
              "only R may be known at run time), got "
           << type;
  // R is an i32 parameter and C at most contract::kMaxExtent (the
  // verifier's bound): row offsets are i64, in-row offsets i32. Scale
  // offsets are i32 element offsets: for a static R the whole tensor must
  // stay below 2^31 elements (a run-time R the launch bounds, with
  // fewer elements than device memory holds bytes).
  std::optional<int64_t> elements = contract::getNumElements(type.getShape());
  if (!type.isDynamicDim(0) &&
      (!elements || *elements > contract::kMaxIndexedElements))
    return op->emitOpError()
           << kernels << " take at most " << contract::kMaxExtentText
           << " elements (32-bit offsets), got " << type
           << ": split the tensor along R";
  return success();
}

/// The problem's input: a 2-D matrix with a static C (its extents and element
/// type); R may be dynamic (a run-time kernel parameter).
static FailureOr<QuantizeProblem> getInputProblem(Operation *op,
                                                  RankedTensorType type) {
  if (failed(checkKernelMatrix(op, type, "the quantization kernels")))
    return failure();
  QuantizeProblem p;
  p.dynamicRows = type.isDynamicDim(0);
  p.rows = type.getDimSize(0);
  p.cols = type.getDimSize(1);
  p.inputType = type.getElementType();
  return p;
}

FailureOr<QuantizeProblem> QuantizeProblem::get(AmaxOp op) {
  FailureOr<QuantizeProblem> input =
      getInputProblem(op, cast<RankedTensorType>(op.getInput().getType()));
  if (failed(input))
    return failure();
  QuantizeProblem p = *input;
  p.isAmaxOnly = true;
  if (failed(checkShape(op, p)))
    return failure();
  return p;
}

/// The problem of `op` as far as the op alone decides it, after the checks
/// of the kernels' contract (docs/contract.md) that hold whatever the
/// pipeline does to the op later; QuantizeProblem::get adds what depends on
/// its neighbours and on the chip.
/// A CUDA grid's largest y extent (a batch's grid is fixed, one row of CTAs
/// per 128 rows).
static constexpr int64_t kMaxGridY = 65535;

/// A batch of matrices [G, R, C] (expert weights): one cast of the
/// [G * R, C] matrix whose 128x128 tiles stay inside one matrix.
static FailureOr<QuantizeProblem> getBatchProblem(QuantizeOp op) {
  auto type = cast<RankedTensorType>(op.getInput().getType());
  GranularityAttr g = op.getGranularity();
  int64_t tile = kQuantizeTileRows;
  if (!g.isTile() || g.getTile().rows != tile || !type.hasStaticShape() ||
      type.getDimSize(1) % tile != 0 || type.getDimSize(2) % tile != 0 ||
      (op.getColumnwise() &&
       op.getColumnwiseLayout() != ColumnwiseLayout::Transposed))
    return op.emitOpError()
           << "the quantization kernels take a batch of matrices [G, R, C] "
              "in 128x128 tiles with static R and C multiples of 128 (no tile "
              "crosses two matrices) and a transposed columnwise output, got "
           << type << " in " << g.describe();
  std::optional<int64_t> rows =
      contract::getNumElements({type.getDimSize(0), type.getDimSize(1)});
  auto matrix = RankedTensorType::get(
      {rows ? *rows : ShapedType::kDynamic, type.getDimSize(2)},
      type.getElementType());
  FailureOr<QuantizeProblem> p = getInputProblem(op, matrix);
  if (failed(p))
    return failure();
  if (p->rows / tile > kMaxGridY)
    return op.emitOpError() << "the quantization kernels take a batch of at "
                               "most "
                            << kMaxGridY * tile
                            << " rows in all (a grid row per 128 rows), got "
                            << type;
  p->groups = type.getDimSize(0);
  return p;
}

static FailureOr<QuantizeProblem> getContractProblem(QuantizeOp op) {
  using Rule = QuantizeProblem::Rule;
  FailureOr<QuantizeProblem> input =
      cast<ShapedType>(op.getInput().getType()).getRank() == 3 &&
              op.getGranularity().isTile()
          ? getBatchProblem(op)
          : getInputProblem(op,
                            cast<RankedTensorType>(op.getInput().getType()));
  if (failed(input))
    return failure();
  QuantizeProblem p = *input;
  p.rowwise = static_cast<bool>(op.getRowwise());
  p.columnwise = static_cast<bool>(op.getColumnwise());
  p.elementType = cast<ShapedType>(p.rowwise ? op.getRowwise().getType()
                                             : op.getColumnwise().getType())
                      .getElementType();
  p.columnwiseTransposed =
      op.getColumnwiseLayout() == ColumnwiseLayout::Transposed;
  GranularityAttr g = op.getGranularity();
  p.granularity = g.getKind();

  auto scaleType = [&](Value v) {
    return v ? cast<ShapedType>(v.getType()).getElementType() : Type();
  };
  for (Value s : {op.getRowwiseScaleInv(), op.getColumnwiseScaleInv()})
    if (s && !g.isMX() && !op.getScaleGranularityAttr() &&
        !scaleType(s).isF32())
      return op.emitOpError() << "the quantization kernels write f32 "
                                 "scale_inv for non-MX granularities, got "
                              << scaleType(s);

  if (g.isTensor()) {
    p.rule = Rule::Tensor;
    p.scaleSource = QuantizeScaleSource::Given;
  } else if (g.isRow()) {
    // One scale per row of x: a 1 x C block. A row's threads reduce its
    // maximum, then cast it (see RowLayout).
    auto current = dyn_cast<CurrentScalingAttr>(op.getRecipe());
    if (!current || op.getScale())
      return op.emitOpError() << "the row-granularity quantization kernel "
                                 "takes #fp8.current scaling without a scale "
                                 "operand (each row's scale from its amax)";
    p.scaleSource = QuantizeScaleSource::PerBlock;
    p.rule = Rule::Current;
    p.epsilon = current.getEpsilon().convertToFloat();
    p.pow2 = current.getPow2();
  } else {
    p.scaleSource = QuantizeScaleSource::PerBlock;
    p.blockRows = g.getTile().rows;
    p.blockCols = g.getTile().cols;
    if (auto blockwise = dyn_cast<BlockwiseScalingAttr>(op.getRecipe())) {
      p.rule = blockwise.getScales() == BlockScaleKind::PowerOfTwo
                   ? Rule::BlockwisePow2
                   : Rule::BlockwiseF32;
      p.amaxClamp = blockwise.getAmaxClamp().convertToFloat();
    } else if (auto mx = dyn_cast<MXScalingAttr>(op.getRecipe())) {
      p.rule = mx.getRounding() == UE8M0Rounding::RoundUp ? Rule::MXRoundUp
                                                          : Rule::MXOcp;
    } else {
      return op.emitOpError() << "the quantization kernels take tile "
                                 "granularities with #fp8.blockwise only";
    }
    // The verifier allows scale_granularity (mx 1x32) for power-of-two
    // blockwise tiles only.
    p.mxScales = static_cast<bool>(op.getScaleGranularityAttr());
    bool supported = (p.blockRows == 1 && p.blockCols == 128) ||
                     (p.blockRows == 128 && p.blockCols == 128) ||
                     (g.isMX() && p.blockRows == 1 && p.blockCols == 32);
    if (!supported)
      return op.emitOpError() << "the quantization kernels take 1x128 and "
                                 "128x128 tiles and MX 1x32 blocks, got "
                              << g.describe();
  }
  if (failed(checkShape(op, p)))
    return failure();
  return p;
}

LogicalResult mlir::fp8::verifyQuantizeKernelContract(QuantizeOp op) {
  return getContractProblem(op);
}

FailureOr<QuantizeProblem> QuantizeProblem::get(QuantizeOp op,
                                                const ChipInfo &chip,
                                                bool scaleFromAmax,
                                                int64_t historyLength) {
  FailureOr<QuantizeProblem> contract = getContractProblem(op);
  if (failed(contract))
    return failure();
  QuantizeProblem p = *contract;
  p.historyLength = historyLength;
  p.hardwareUe8m0 = chip.supportsBlockScaledMma;
  p.minBlocksPerSM = chip.architecture == Architecture::Hopper
                         ? kQuantizeMinBlocksPerSM
                         : kWideMinBlocksPerSM;
  if (p.granularity == GranularityKind::Tensor) {
    if (!op.getScale())
      return op.emitOpError()
             << "a per-tensor quantization without a scale operand needs a "
                "grid-wide amax first: run fp8-decompose-quantize";
    if (scaleFromAmax) {
      auto current = cast<CurrentScalingAttr>(op.getRecipe());
      p.scaleSource = QuantizeScaleSource::FromAmax;
      p.rule = Rule::Current;
      p.epsilon = current.getEpsilon().convertToFloat();
      p.pow2 = current.getPow2();
    }
  } else if (p.granularity == GranularityKind::Row) {
    // The rows of x and those of x^T (its columns) each need a pass over
    // the whole tensor: one kernel each.
    if (p.rowwise && p.columnwise)
      return op.emitOpError() << "the row-granularity quantization kernels "
                                 "write the rowwise or the columnwise output, "
                                 "not both: run fp8-decompose-quantize";
    if (historyLength > 0)
      return op.emitOpError() << "the row-granularity quantization kernel "
                                 "does not record an amax";
  }
  return p;
}

StringRef mlir::fp8::detail::getRuleName(QuantizeProblem::Rule rule) {
  switch (rule) {
  case QuantizeProblem::Rule::Tensor:
    return "tensor";
  case QuantizeProblem::Rule::Current:
    return "current";
  case QuantizeProblem::Rule::BlockwisePow2:
    return "blockwise_pow2";
  case QuantizeProblem::Rule::BlockwiseF32:
    return "blockwise_f32";
  case QuantizeProblem::Rule::MXRoundUp:
    return "mxfp8";
  case QuantizeProblem::Rule::MXOcp:
    return "mxfp8_ocp";
  }
  llvm_unreachable("unknown rule");
}

std::string mlir::fp8::detail::getGranularityName(const QuantizeProblem &p) {
  if (p.granularity == GranularityKind::Tensor)
    return "tensor";
  if (p.granularity == GranularityKind::Row)
    return "row";
  return llvm::formatv("{0}x{1}", p.blockRows, p.blockCols).str();
}

std::string mlir::fp8::getQuantizeKernelName(const QuantizeProblem &p) {
  std::string rows =
      p.dynamicRows ? std::string("dyn") : std::to_string(p.rows);
  if (p.isAmaxOnly)
    return llvm::formatv("fp8_amax_{0}_r{1}_c{2}",
                         getKernelDTypeName(p.inputType), rows, p.cols)
        .str();
  std::string name = llvm::formatv(
      "fp8_quantize_{0}_{1}_{2}_{3}_r{4}_c{5}", getRuleName(p.rule),
      getGranularityName(p), getKernelDTypeName(p.inputType),
      getKernelDTypeName(p.elementType), rows, p.cols);
  // Parameters of the rule that change the code.
  if (p.rule == QuantizeProblem::Rule::Current && (p.epsilon != 0.f || p.pow2))
    name += llvm::formatv("_eps{0:x}{1}", num::floatBits(p.epsilon),
                          p.pow2 ? "_pow2" : "")
                .str();
  if ((p.rule == QuantizeProblem::Rule::BlockwisePow2 ||
       p.rule == QuantizeProblem::Rule::BlockwiseF32))
    name += llvm::formatv("_clamp{0:x}", num::floatBits(p.amaxClamp)).str();
  if (p.rowwise)
    name += "_row";
  if (p.columnwise)
    name += p.columnwiseTransposed ? "_col" : "_col_untransposed";
  if (p.amaxScalar)
    name += "_amax";
  else if (p.historyLength > 0)
    name += llvm::formatv("_hist{0}", p.historyLength).str();
  if (p.mxScales)
    name += "_mxscales";
  if (p.isBatch())
    name += llvm::formatv("_g{0}", p.groups).str();
  return name;
}

bool mlir::fp8::detail::hasColumnBlocks(const QuantizeProblem &p) {
  return p.hasUntransposedColumnwise() &&
         p.scaleSource == QuantizeScaleSource::PerBlock &&
         p.granularity != GranularityKind::Row &&
         p.blockRows != kQuantizeTileRows;
}

int64_t mlir::fp8::detail::getColumnBlocksPerTile(const QuantizeProblem &p) {
  // Row granularity (columnwise): a column's block is all of it.
  if (p.granularity == GranularityKind::Row)
    return 1;
  return kQuantizeTileRows / p.blockCols;
}

int64_t mlir::fp8::detail::getStashBytes(const QuantizeProblem &p) {
  if (!hasColumnBlocks(p))
    return 0;
  return kQuantizeTileRows * kQuantizeTileCols *
         (p.inputType.getIntOrFloatBitWidth() / 8);
}

int64_t mlir::fp8::getQuantizeSharedMemoryBytes(const QuantizeProblem &p) {
  int64_t tileBytes = 0;
  if (p.needsTranspose())
    tileBytes = kTransposeTileBytes;
  // Untransposed columnwise blocks: the stashed tile, then per-warp column
  // maxima (u32) and the blocks' multipliers (f32), per row block of the
  // tile.
  if (hasColumnBlocks(p))
    tileBytes = getStashBytes(p) + getColumnBlocksPerTile(p) * (kWarps + 1) *
                                       kQuantizeTileCols * 4;
  // Row granularity, columnwise: the columns' maxima per warp (u32), then
  // their multipliers (f32), after the transpose tile.
  if (p.granularity == GranularityKind::Row && p.columnwise)
    tileBytes += (kWarps + 1) * kQuantizeTileCols * 4;
  return tileBytes + kReductionBytes;
}

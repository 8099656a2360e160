//===- QuantizeKernel.cpp - Quantization kernels for every recipe ---------===//
//
// Every rule below is the numerics library's (lib/Numerics), emitted as GPU
// arithmetic that gives the same bits: RN f32 divisions, no FMA contraction
// (there is no add to contract), no flush-to-zero, amax as the unsigned
// maximum of |x|'s bits (exact, and NaN-propagating since every NaN's bits
// exceed inf's).
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/KernelSkeleton/QuantizeKernel.h"
#include "FP8/Conversion/KernelSkeleton/GemmKernel.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"
#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"
#include "FP8/Dialect/FP8/IR/FP8Contract.h"
#include "FP8/Numerics/Formats.h"
#include "FP8/Numerics/Scaling.h"

#include "llvm/Support/FormatVariadic.h"

#include <cfloat>

using namespace mlir;
using namespace mlir::fp8;
namespace num = ::fp8::numerics;

/// f32 bit patterns (IEEE 754 binary32).
static constexpr int64_t kF32Inf = 0x7F800000;
static constexpr int64_t kF32MantMask = 0x007FFFFF;
static constexpr int64_t kF32SignAndExponentMask = 0xFF800000;
static constexpr int64_t kF32QuietNaN = 0x7FC00000;
/// 2^-127, the f32 subnormal UE8M0 code 0 (and code 254's multiplier) is.
static constexpr int64_t kF32TwoPowMinus127 = 0x00400000;
/// UE8M0 codes (OCP MX v1.0): 0xFF is NaN, 0xFE the largest finite.
static constexpr int64_t kUe8m0NaN = 0xFF;
static constexpr int64_t kUe8m0MaxFinite = 0xFE;

/// Thread layout of a 128x128 tile: thread t holds 8 consecutive columns
/// (chunk t % 16) of the rows t / 16 + 16 i, i < 8.
static constexpr int64_t kVector = 8;
static constexpr int64_t kChunksPerRow = kQuantizeTileCols / kVector; // 16
static constexpr int64_t kRowsPerThread =
    kQuantizeTileRows * kChunksPerRow / kQuantizeThreads; // 8
static constexpr int64_t kRowStep = kQuantizeThreads / kChunksPerRow; // 16
/// A thread quantizes 8 segments of 8 consecutive elements per output.
static constexpr int64_t kSegments = kRowsPerThread;
static_assert(kRowsPerThread == kVector, "a thread holds 8 x 8 values");
/// The f32 transpose tile: 128 floats a row, in 16-byte groups of 4.
static constexpr int64_t kTransposeRowBytes = kQuantizeTileCols * 4;
static constexpr int64_t kGroupBytes = 16;
static constexpr int64_t kTransposeTileBytes =
    kQuantizeTileRows * kTransposeRowBytes;

static constexpr int64_t kWarps = kQuantizeThreads / 32;
/// Bytes of the CTA reduction scratch (one u32 per warp).
static constexpr int64_t kReductionBytes = 4 * kWarps;
/// CTAs of a cast kernel that ptxas must fit on one SM: the 64 KiB transpose
/// tile allows 3, and registers should not allow fewer (65536 / (3 * 256)
/// caps them at 80 per thread).
static constexpr int64_t kQuantizeMinBlocksPerSM = 3;
/// The same where 80 registers spill: on sm_100a, whose ptxas spills three
/// of the transposing casts at 80; 128 registers do not.
static constexpr int64_t kWideMinBlocksPerSM = 2;
/// Row granularity: each thread keeps at most this many 16-byte loads of its
/// row in registers (32 registers), and the grid's x extent holds this many
/// consecutive row bands (CTAs), so that its y extent (at most 65535)
/// reaches R = 524280 even at one row a CTA.
static constexpr int64_t kRowLoadsPerThread = 8;
static constexpr int64_t kRowBandsPerGridRow = 8;
/// A transposed columnwise output's rows are R bytes: 16-byte aligned rows
/// (its 8-byte stores, and the TMA loads of the GEMMs reading it) need R a
/// multiple of 16, checked at launch for a run-time R.
static constexpr int64_t kTransposedRowAlignment = 16;
/// The MX 128x4 scale-factor atom (see GemmKernel.h kMXAtom*).
static constexpr int64_t kAtomRows = 128;
static constexpr int64_t kAtomBytes = 512;

//===----------------------------------------------------------------------===//
// The problem
//===----------------------------------------------------------------------===//

namespace {
/// How a row-granularity cast spreads its rows over a CTA: `threadsPerRow`
/// threads share a row, each loading `chunksPerThread` chunks of 8 elements
/// of it per slab, chunk k * threadsPerRow + t for thread t (coalesced). A
/// row of at most 2048 16-byte loads is one slab: it stays in registers
/// from its amax to its cast, so x is read once. A longer row takes several
/// slabs and is read twice (the second time from L2: a CTA's rows are
/// few). A CTA casts `rowsPerCta` rows, a band.
struct RowLayout {
  int64_t loadsPerChunk;   ///< 16-byte loads of 8 elements: 1, or 2 (f32)
  int64_t chunksPerRow;    ///< C / 8
  int64_t threadsPerRow;   ///< a power of two, at most the CTA
  int64_t chunksPerThread; ///< per slab
  int64_t slabs;
  int64_t rowsPerCta;

  int64_t chunksPerSlab() const { return threadsPerRow * chunksPerThread; }
  /// Whether the last slab has chunks past C (clamped loads, no stores).
  bool hasPartialSlab() const { return chunksPerRow % chunksPerSlab() != 0; }
};
} // namespace

static RowLayout getRowLayout(const QuantizeProblem &p) {
  using P = QuantizeProblem;
  RowLayout l;
  l.loadsPerChunk = p.inputType.getIntOrFloatBitWidth() * kVector / 128;
  l.chunksPerRow = p.cols / kVector;
  int64_t maxChunks = kRowLoadsPerThread / l.loadsPerChunk;
  l.threadsPerRow = std::min<int64_t>(
      kQuantizeThreads, llvm::PowerOf2Ceil(P::ceilDiv(l.chunksPerRow, maxChunks)));
  l.chunksPerThread =
      std::min(maxChunks, P::ceilDiv(l.chunksPerRow, l.threadsPerRow));
  l.slabs = P::ceilDiv(l.chunksPerRow, l.chunksPerSlab());
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
    return op->emitOpError() << kernels << " take 2-D inputs, got rank "
                             << type.getRank()
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
static FailureOr<QuantizeProblem> getInputProblem(Operation *op, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
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
  FailureOr<QuantizeProblem> input = getInputProblem(op, op.getInput());
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
static FailureOr<QuantizeProblem> getContractProblem(QuantizeOp op) {
  using Rule = QuantizeProblem::Rule;
  FailureOr<QuantizeProblem> input = getInputProblem(op, op.getInput());
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

static StringRef getRuleName(QuantizeProblem::Rule rule) {
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

static std::string getGranularityName(const QuantizeProblem &p) {
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
    return llvm::formatv("fp8_amax_{0}_r{1}_c{2}", getKernelDTypeName(p.inputType),
                         rows, p.cols)
        .str();
  std::string name = llvm::formatv(
      "fp8_quantize_{0}_{1}_{2}_{3}_r{4}_c{5}", getRuleName(p.rule),
      getGranularityName(p), getKernelDTypeName(p.inputType),
      getKernelDTypeName(p.elementType), rows, p.cols);
  // Parameters of the rule that change the code.
  if (p.rule == QuantizeProblem::Rule::Current &&
      (p.epsilon != 0.f || p.pow2))
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
  return name;
}

/// Whether the cast has an untransposed columnwise output with per-block
/// scales of its own (128x1 or MX 32x1 blocks of x: column blocks).
static bool hasColumnBlocks(const QuantizeProblem &p) {
  return p.hasUntransposedColumnwise() &&
         p.scaleSource == QuantizeScaleSource::PerBlock &&
         p.granularity != GranularityKind::Row &&
         p.blockRows != kQuantizeTileRows;
}

/// Row blocks of a tile in an untransposed columnwise output with per-block
/// scales (128x1 blocks: 1, MX 32x1 blocks: 4).
static int64_t getColumnBlocksPerTile(const QuantizeProblem &p) {
  // Row granularity (columnwise): a column's block is all of it.
  if (p.granularity == GranularityKind::Row)
    return 1;
  return kQuantizeTileRows / p.blockCols;
}

/// Bytes of the copy of the loaded tile that a cast with column blocks keeps
/// in shared memory for its columnwise pass: each thread's 16-byte loads as
/// loaded (in the input type), 32 KiB for 16-bit inputs.
static int64_t getStashBytes(const QuantizeProblem &p) {
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

//===----------------------------------------------------------------------===//
// Metadata
//===----------------------------------------------------------------------===//

ScaleTensorLayout mlir::fp8::getScaleTensorLayout(GranularityKind granularity,
                                                   int64_t blockRows,
                                                   int64_t rows, int64_t cols) {
  using P = QuantizeProblem;
  switch (granularity) {
  case GranularityKind::Tensor:
    return {"tensor", {}, md::DType::F32, 4};
  case GranularityKind::Row:
    return {"row_major", {rows, 1}, md::DType::F32, 4};
  case GranularityKind::MX:
    // The 128x4 UE8M0 atoms the sm_100a block-scaled MMA reads:
    // [ceil(rows/128), ceil(cols/128), 512] bytes.
    return {"mx_atom_128x4_ue8m0",
            {P::ceilDiv(rows, kAtomRows), P::ceilDiv(cols, 128), kAtomBytes},
            md::DType::UE8M0,
            1};
  case GranularityKind::Tile:
    break;
  }
  if (blockRows == 1)
    // 1x128: MN-major [ceil(cols/128), roundup(rows, 4)], what the GEMMs
    // read (kMNMajorScaleAlignment).
    return {"mn_major_tma_aligned",
            {P::ceilDiv(cols, kBlockwiseScaleBlock),
             P::roundUp(rows, kMNMajorScaleAlignment)},
            md::DType::F32,
            4};
  return {"row_major",
          {P::ceilDiv(rows, 128), P::ceilDiv(cols, 128)},
          md::DType::F32,
          4};
}

/// The granularity whose layout the scales are stored in.
static GranularityKind getScaleLayoutKind(const QuantizeProblem &p) {
  return p.mxScales ? GranularityKind::MX : p.granularity;
}

static ScaleTensorLayout getScaleLayout(const QuantizeProblem &p, int64_t rows,
                                        int64_t cols) {
  ScaleTensorLayout layout =
      getScaleTensorLayout(getScaleLayoutKind(p), p.blockRows, rows, cols);
  // A tile's code is stored four times at once, as one 32-bit word.
  if (p.mxScales)
    layout.alignment = 4;
  return layout;
}

std::vector<md::Expr>
mlir::fp8::getRunTimeRowsScaleShape(GranularityKind layout, int64_t blockRows,
                                    int64_t cols, bool columnwise) {
  using P = QuantizeProblem;
  md::Expr rows = md::Expr::symbol(kQuantizeRowsSymbol.str());
  auto num = [](int64_t v) { return md::Expr::constant(v); };
  md::Expr rowTiles = md::Expr::ceilDiv(rows, num(kQuantizeTileRows));
  md::Expr colTiles = num(P::ceilDiv(cols, kQuantizeTileCols));
  switch (layout) {
  case GranularityKind::Tensor:
    return {};
  case GranularityKind::MX:
    // Atoms [ceil(rows/128), ceil(cols/128), 512] of x or of x^T.
    if (columnwise)
      return {colTiles, rowTiles, num(kAtomBytes)};
    return {rowTiles, colTiles, num(kAtomBytes)};
  case GranularityKind::Row:
    // [R, 1], or [C, 1] for the rows of x^T.
    return {columnwise ? num(cols) : rows, num(1)};
  case GranularityKind::Tile:
    break;
  }
  if (blockRows != 1)
    return columnwise ? std::vector<md::Expr>{colTiles, rowTiles}
                      : std::vector<md::Expr>{rowTiles, colTiles};
  // 1x128 blocks of x: [ceil(C/128), roundup(R, 4)]; of x^T (128x1 blocks
  // of x): [ceil(R/128), roundup(C, 4)].
  if (columnwise)
    return {rowTiles, num(P::roundUp(cols, kMNMajorScaleAlignment))};
  return {num(P::ceilDiv(cols, kBlockwiseScaleBlock)),
          md::Expr::roundUp(rows, num(kMNMajorScaleAlignment))};
}

/// The metadata shape of the rowwise (`columnwise` false) or columnwise
/// scale tensor: getScaleLayout's extents, or getRunTimeRowsScaleShape's.
static std::vector<md::Expr> getScaleShape(const QuantizeProblem &p,
                                           bool columnwise) {
  if (!p.dynamicRows)
    return getConstantShape(columnwise
                                ? getScaleLayout(p, p.cols, p.rows).shape
                                : getScaleLayout(p, p.rows, p.cols).shape);
  return getRunTimeRowsScaleShape(getScaleLayoutKind(p), p.blockRows, p.cols,
                                  columnwise);
}

static md::QuantizeRule getMetadataRule(QuantizeProblem::Rule rule) {
  md::QuantizeRule out = md::QuantizeRule::Tensor;
  bool known = md::parseEnum(getRuleName(rule), out);
  assert(known && "a rule the schema does not name");
  (void)known;
  return out;
}

/// The `quantize` description: what the kernel computes, for tools.
static md::QuantizeInfo getQuantizeDescription(const QuantizeProblem &p) {
  md::QuantizeInfo info;
  info.rows = p.dynamicRows ? md::Expr::symbol(kQuantizeRowsSymbol.str())
                            : md::Expr::constant(p.rows);
  info.cols = p.cols;
  info.inputDtype = getKernelDType(p.inputType);
  if (p.isAmaxOnly) {
    info.amax = "max |x| (NaN-propagating) is max-ed into amax[0] with "
                "atomics: pass it zeroed";
    return info;
  }
  info.dtype = getKernelDType(p.elementType);
  info.rule = getMetadataRule(p.rule);
  info.granularity = getGranularityName(p);
  // With a run-time R only the layouts' names are used.
  int64_t rows = p.dynamicRows ? kQuantizeTileRows : p.rows;
  if (p.rowwise)
    info.rowwiseScaleLayout = getScaleLayout(p, rows, p.cols).name.str();
  if (p.columnwise) {
    info.columnwiseScaleLayout = getScaleLayout(p, p.cols, rows).name.str();
    info.columnwiseLayout = p.columnwiseTransposed
                                ? md::ColumnwiseLayout::Transposed
                                : md::ColumnwiseLayout::Untransposed;
  }
  if (p.rule == QuantizeProblem::Rule::Current) {
    info.epsilon = p.epsilon;
    info.pow2 = p.pow2;
  }
  if (p.rule == QuantizeProblem::Rule::BlockwisePow2 ||
      p.rule == QuantizeProblem::Rule::BlockwiseF32)
    info.amaxClamp = p.amaxClamp;
  if (p.mxScales)
    info.scaleGranularity = "mx1x32";
  if (p.amaxScalar)
    info.amaxOut =
        "amax(x) is max-ed into amax_out[0] (NaN sticky): pass it zeroed";
  else if (p.historyLength > 0)
    info.amaxHistory =
        "slot 0 becomes max(slot 0, amax(x)), NaN sticky, in place";
  return info;
}

md::KernelMetadata
mlir::fp8::buildQuantizeKernelMetadata(StringRef name, const ChipInfo &chip,
                                       const QuantizeProblem &p) {
  // Row granularity: rowwise, bands of RowLayout rows, kRowBandsPerGridRow
  // of them along x (tile_n = C / 8 gives x = 8) and the rest along y;
  // columnwise, one CTA per 128-column band (for any R).
  md::Grid grid =
      p.granularity != GranularityKind::Row
          ? getTilesGrid(kQuantizeTileRows, kQuantizeTileCols, "x")
      : p.columnwise
          ? getFixedGrid({p.colTiles(), 1, 1})
          : getTilesGrid(getRowLayout(p).rowsPerCta * kRowBandsPerGridRow,
                         p.cols / kRowBandsPerGridRow, "x");
  md::KernelMetadata metadata = makeKernelMetadata(
      name, chip,
      p.isAmaxOnly ? md::KernelKind::Amax : md::KernelKind::Quantize,
      kQuantizeThreads, getQuantizeSharedMemoryBytes(p), std::move(grid));
  using Role = md::OperandRole;
  auto operand = [&](StringRef opName, md::DType dtype,
                     std::vector<md::Expr> shape, Role role,
                     int64_t alignment) {
    addPointerOperand(metadata, opName, dtype, std::move(shape), role,
                      alignment);
  };
  // x's layout, [R, C] (R the symbol of a run-time R).
  md::Expr rowsDim = p.dynamicRows ? md::Expr::symbol(kQuantizeRowsSymbol.str())
                                   : md::Expr::constant(p.rows);
  md::Expr colsDim = md::Expr::constant(p.cols);
  // 16-byte vector loads of the input, 8-byte stores of the FP8 data.
  operand("x", getKernelDType(p.inputType), {rowsDim, colsDim}, Role::Input,
          16);
  if (p.isAmaxOnly) {
    operand("amax", md::DType::F32, {}, Role::Output, 4);
  } else {
    if (p.scaleSource == QuantizeScaleSource::Given)
      operand("scale", md::DType::F32, {}, Role::Input, 4);
    if (p.scaleSource == QuantizeScaleSource::FromAmax)
      operand("amax", md::DType::F32, {}, Role::Input, 4);
    md::DType elem = getKernelDType(p.elementType);
    // With a run-time R only the layouts' dtypes and alignments are used.
    int64_t rows = p.dynamicRows ? kQuantizeTileRows : p.rows;
    if (p.rowwise) {
      ScaleTensorLayout s = getScaleLayout(p, rows, p.cols);
      operand("rowwise", elem, {rowsDim, colsDim}, Role::Output, 8);
      operand("rowwise_scale_inv", s.dtype, getScaleShape(p, false),
              Role::Output, s.alignment);
    }
    if (p.columnwise) {
      ScaleTensorLayout s = getScaleLayout(p, p.cols, rows);
      std::vector<md::Expr> shape = {rowsDim, colsDim};
      if (p.columnwiseTransposed)
        shape = {colsDim, rowsDim};
      operand("columnwise", elem, shape, Role::Output, 8);
      operand("columnwise_scale_inv", s.dtype, getScaleShape(p, true),
              Role::Output, s.alignment);
    }
    if (p.amaxScalar)
      operand("amax_out", md::DType::F32, {}, Role::Output, 4);
    else if (p.historyLength > 0)
      operand("amax_history", md::DType::F32,
              getConstantShape({p.historyLength}), Role::Output, 4);
  }
  if (p.dynamicRows && p.needsTranspose())
    // Checked at launch: R is only known then.
    addValueParam(metadata, "r", md::ParamKind::I32, kQuantizeRowsSymbol,
                  kTransposedRowAlignment,
                  "the transposed columnwise output's rows are R bytes, "
                  "16-byte aligned");
  else if (p.dynamicRows)
    addValueParam(metadata, "r", md::ParamKind::I32, kQuantizeRowsSymbol);
  metadata.quantize = getQuantizeDescription(p);
  return metadata;
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

/// numerics' finiteOrMax of a scale that is not negative: +inf becomes
/// FLT_MAX (emitFiniteOrFltMax takes either sign, one `and` more).
static Value finiteOrMax(KernelBuilder &kb, Value scale) {
  ImplicitLocOpBuilder &b = kb.builder();
  return arith::SelectOp::create(
      b, kb.eq(arith::BitcastOp::create(b, b.getI32Type(), scale),
               kb.i32(kF32Inf)),
      kb.f32(FLT_MAX), scale);
}

/// The bits of 2^(127 - code) for a biased exponent `code` (i32, 1..254):
/// the exact inverse of the power of two 2^(code - 127), without a division
/// (2^-127 is subnormal).
static Value powerOfTwoInverse(KernelBuilder &kb, Value code) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value biased = kb.sub(kb.i32(254), code);
  return arith::SelectOp::create(
      b, kb.eq(biased, kb.i32(0)), kb.i32(kF32TwoPowMinus127),
      arith::ShLIOp::create(b, biased, kb.i32(23)));
}

namespace {
/// A block's scale: the quantizer's multiplier and what is stored (f32
/// scale_inv, or the UE8M0 code as i8).
struct BlockScale {
  Value multiplier;
  Value stored;
};

/// The outputs of a cast: rowwise (x's layout), columnwise stored
/// transposed (x^T, [C, R]) or untransposed (x's layout, [R, C]: the
/// rowwise geometry, with the scales of x^T's blocks, i.e. of columns).
enum class OutputKind { Rowwise, ColumnwiseTransposed, ColumnwiseUntransposed };

/// One output of a cast as one thread sees it: the stored matrix (rowwise
/// and untransposed columnwise: x, [R, C]; transposed columnwise: x^T,
/// [C, R]), the CTA's tile of it, and the rows of the thread's segments.
/// Segment s (< kSegments) is the 8 elements at columns 8 * chunk.. of tile
/// row `rowBase + rowOffset(s)`.
struct OutputTile {
  bool transposed;
  /// Extents of the stored matrix (`rows` is ShapedType::kDynamic for a
  /// run-time R; transposed outputs have static extents).
  int64_t rows, cols;
  /// `rows` as an i32: the constant or the run-time R.
  Value numRows;
  Value rowTile, colTile; ///< i32
  Value rowBase;          ///< i32
  Value data, scales;

  /// Rowwise: rows rowInTile + 16 s (the loaded rows). Transposed: the 4
  /// rows of each of the column groups rowInTile and rowInTile + 16 of the
  /// transpose tile, rows 4 * rowInTile + 64 (s / 4) + s % 4.
  int64_t rowOffset(int64_t s) const {
    return transposed ? 64 * (s / 4) + s % 4 : kRowStep * s;
  }
};

/// The multipliers of a thread's segments under per-block scales: segment
/// s's was computed by lane `blockFirstLane | owner[s]` as its
/// `slots[slot[s]]`, and is fetched where it is used (one live at a time).
struct SegmentMultipliers {
  SmallVector<Value> slots;
  Value blockFirstLane;
  SmallVector<int64_t> slot, owner;
};

class QuantizeKernelEmitter {
public:
  QuantizeKernelEmitter(ImplicitLocOpBuilder &b, const QuantizeProblem &p)
      : b(b), kb(b), p(p) {}

  void emit(gpu::GPUFuncOp func);
  /// The CTA's 128x128 tile of x: amax, casts and scales.
  void emitTile();

  /// Row granularity: the CTA's rows (RowLayout): each row's amax, its
  /// scale, then its cast.
  void emitRows();
  /// Row granularity, columnwise output (the rows of x^T: x's columns):
  /// the CTA's 128-column band, its columns' maxima over every row tile,
  /// their scales, then the cast of every row tile.
  void emitColumns();
  /// Runs `body` for each row tile of x (rowTile its index), carrying
  /// `inits` (i32) from one to the next; returns the last values.
  SmallVector<Value>
  forEachRowTile(ValueRange inits,
                 function_ref<SmallVector<Value>(ValueRange)> body);

private:
  ImplicitLocOpBuilder &b;
  KernelBuilder kb;
  const QuantizeProblem &p;

  /// Loads the tile and max-es |x|'s bits into `carried`, the thread's 8
  /// running maxima of its columns.
  SmallVector<Value> maxAbsBitsOfColumns(ValueRange carried);

  // Parameters.
  Value x, scaleOrAmax, rowwise, rowwiseScale, columnwise, columnwiseScale,
      amaxOut;
  /// R (i32) when it is a run-time value: the kernel's `r` parameter.
  Value dynamicRows;
  // Thread geometry (i32).
  Value tid, lane, chunk, rowInTile, colTile, rowTile;
  /// Untransposed columnwise blocks: their multipliers in shared memory
  /// (see storeColumnBlockScales).
  Value columnBlockMultipliers;
  /// Row granularity, transposed columnwise output: the multiplier of each
  /// of the thread's 8 output rows (x's columns).
  SmallVector<Value> rowMultipliers;

  Type i32() { return b.getI32Type(); }
  Type f32() { return b.getF32Type(); }
  /// R as an i32: the constant, or the run-time value.
  Value numRows() { return p.dynamicRows ? dynamicRows : kb.i32(p.rows); }
  /// ceil(R / 128), the row tiles (the grid's y extent).
  Value numRowTiles() {
    return p.dynamicRows ? kb.ceilDiv(dynamicRows, kQuantizeTileRows)
                         : kb.i32(p.rowTiles());
  }
  /// Whether some tile is partial (always with a run-time R).
  bool hasPartialTiles() const {
    return p.dynamicRows || p.rows % kQuantizeTileRows != 0 ||
           p.cols % kQuantizeTileCols != 0;
  }
  /// Whether the tile being emitted may be partial, so that its loads and
  /// stores need guards (see emitTile).
  bool guardTile = false;
  Value bits(Value f) { return arith::BitcastOp::create(b, i32(), f); }
  /// Byte (row % 32) * 16 + row / 32 * 4 + block of MX atom `atom`, for a
  /// row (< 128) of the atom and its 1x32 block `block` (< 4; null: the
  /// row's first byte).
  Value atomByteOffset(Value atom, Value row, Value block) {
    Value quarter = kb.divu(row, kb.i32(32));
    Value inRow = kb.mul(quarter, kb.i32(4));
    if (block)
      inRow = kb.add(inRow, block);
    Value rowInQuarter = kb.remu(row, kb.i32(32));
    Value rowBytes = kb.mul(rowInQuarter, kb.i32(16));
    Value atomStart = kb.mul(atom, kb.i32(kAtomBytes));
    Value rowStart = kb.add(atomStart, rowBytes);
    return kb.add(rowStart, inRow);
  }
  /// The UE8M0 code `code` (i8) in each byte of an i32: a tile's code over
  /// the four 1x32 blocks of its 128 columns (mxScales).
  Value repeatedCode(Value code) {
    return kb.mul(arith::ExtUIOp::create(b, i32(), code), kb.i32(0x01010101));
  }
  Value fromBits(Value i) { return arith::BitcastOp::create(b, f32(), i); }
  Value absBits(Value f) { return kb.absF32Bits(f); }
  Value umax(Value x, Value y) { return arith::MaxUIOp::create(b, x, y); }
  /// max.NaN.f32: NaN if either is NaN.
  Value fmaxNaN(Value x, Value y) { return LLVM::MaximumOp::create(b, x, y); }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b, c, t, f);
  }
  Value cmpi(arith::CmpIPredicate pred, Value x, Value y) {
    return arith::CmpIOp::create(b, pred, x, y);
  }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, x, y); }
  Value xori(Value x, Value y) { return arith::XOrIOp::create(b, x, y); }
  Value shl(Value x, Value y) { return arith::ShLIOp::create(b, x, y); }
  Value shr(Value x, Value y) { return arith::ShRUIOp::create(b, x, y); }
  Value divf(Value x, Value y) { return arith::DivFOp::create(b, x, y); }
  Value prmt(Value lo, Value hi, int64_t selector) {
    return NVVM::PermuteOp::create(b, i32(), lo, hi, kb.i32(selector),
                                   NVVM::PermuteMode::DEFAULT);
  }
  Value shuffleXor(Value v, int64_t offset) {
    return gpu::ShuffleOp::create(b, v, static_cast<int32_t>(offset),
                                  /*width=*/32, gpu::ShuffleMode::XOR)
        .getShuffleResult();
  }
  Value shuffleIdx(Value v, Value srcLane) {
    return gpu::ShuffleOp::create(b, v, srcLane, kb.i32(32),
                                  gpu::ShuffleMode::IDX)
        .getShuffleResult();
  }

  /// Butterfly maximum over the lanes whose index differs in `offsets`.
  Value shuffleMax(Value v, ArrayRef<int64_t> offsets);
  /// Maximum of `v` over the CTA (every thread gets it).
  Value ctaMax(Value v);
  /// max |v| (NaN if any is NaN) as an f32: what a block scale depends on.
  Value blockAbsMax(ArrayRef<Value> values);

  /// The thread's 8 x 8 inputs of the tile (rows rowInTile + 16 i, columns
  /// 8 * chunk..) as f32, zero outside x. With `stash`, the loaded vectors
  /// are also kept in shared memory for loadStashedTile.
  SmallVector<Value> loadTile(bool stash = false);
  /// Segment `s` (8 values) of what loadTile(/*stash=*/true) loaded, from
  /// shared memory (each thread reads back its own stores: no barrier).
  /// Elements outside x are zero with `zeroOutside`, else undefined.
  SmallVector<Value> loadStashedSegment(int64_t s, bool zeroOutside = false);
  /// The byte offset in shared memory of the thread's stashed load `index`.
  Value stashOffset(int64_t index);
  /// Where the column maxima and multipliers of storeColumnMaxima and
  /// storeColumnBlockScales start: after the stash.
  Value columnScratch() {
    return kb.bytePtr(kb.dynamicSharedMemory(), getStashBytes(p));
  }
  Value swizzledOffset(Value row, Value group);
  void storeTileToShared(ArrayRef<Value> values);
  SmallVector<Value> loadTransposedSegments();
  BlockScale computeScale(Value amaxBits);
  BlockScale tensorScale();
  Value ue8m0RoundUp(Value y);
  Value ue8m0Ocp(Value amax);
  /// Computes and stores the scales of the blocks of the thread's segments.
  SegmentMultipliers blockMultipliers(ArrayRef<Value> segments,
                                      const OutputTile &out);
  void storeBlockScale(const OutputTile &out, Value segment, Value stored,
                       Value isStoringLane);
  /// Per-block scales of an untransposed columnwise output (blocks of 128
  /// or 32 rows of one column): each warp's column maxima of `values` (the
  /// thread layout) to shared memory, u32 [blocks][warps][128]...
  void storeColumnMaxima(ArrayRef<Value> values);
  /// ... then, after a barrier, each block's scale from them (scale_inv to
  /// global memory), and its multiplier to shared memory, f32
  /// [blocks][128], returned (valid after the closing barrier).
  Value storeColumnBlockScales();
  /// Row granularity: the thread's 16-byte loads (vector<4xi32>, as
  /// loaded) of slab `slab` of x's row `row` (both i32, clamped into x: the
  /// loads past x repeat elements of the row, and are not stored).
  SmallVector<Value> loadRowSlab(const RowLayout &l, Value row, Value slab);
  /// The thread's chunk `k` of slab `slab` of a row (i32), and the index of
  /// its first element in x (i64).
  Value rowChunk(const RowLayout &l, Value slab, int64_t k);
  Value rowChunkIndex(Value row, Value chunk);
  /// The maximum of |x|'s bits over `loads`, as f32 bits (NaN sticky).
  Value rowSlabMax(ArrayRef<Value> loads);
  /// Casts `loads` of slab `slab` of row `row` with `multiplier` and stores
  /// them where `rowValid` (null: every row is) and the chunk is in x.
  void castRowSlab(const RowLayout &l, ArrayRef<Value> loads, Value row,
                   Value rowValid, Value slab, Value multiplier);
  /// Quantizes and stores one output from the thread's segments (8 x 8
  /// values); `shared` is the tile's scale when it has one. A rowwise output
  /// with a shared scale is also the untransposed columnwise one, if any.
  /// `loadSegment`, when given, supplies segment s where it is quantized
  /// instead (`segments` is empty): so that the values are not all live at
  /// once.
  void quantizeOutput(
      ArrayRef<Value> segments, OutputKind kind,
      const std::optional<BlockScale> &shared,
      function_ref<SmallVector<Value>(int64_t)> loadSegment = nullptr);
  /// The 8 FP8 codes of `scaled` (= `inputs` * multiplier) in memory order
  /// as two i32. `signMask`: see the definition; `highSignMask`, when given,
  /// is the second word's.
  Value pack8(ArrayRef<Value> inputs, ArrayRef<Value> scaled, Value signMask,
              Value highSignMask = Value());
};
} // namespace

Value QuantizeKernelEmitter::shuffleMax(Value v, ArrayRef<int64_t> offsets) {
  for (int64_t offset : offsets)
    v = umax(v, shuffleXor(v, offset));
  return v;
}

Value QuantizeKernelEmitter::ctaMax(Value v) {
  v = shuffleMax(v, {16, 8, 4, 2, 1});
  // After the transpose tile: one u32 per warp.
  Value scratch = kb.bytePtr(
      kb.dynamicSharedMemory(),
      getQuantizeSharedMemoryBytes(p) - kReductionBytes);
  Value lane = kb.remu(tid, kb.i32(32));
  Value warp = kb.divu(tid, kb.i32(32));
  kb.ifThen(kb.eq(lane, kb.i32(0)), [&] {
    kb.store(v, kb.bytePtr(scratch, kb.mul(warp, kb.i32(4))));
  });
  gpu::BarrierOp::create(b);
  Value result = kb.load(i32(), scratch);
  for (int64_t w = 1; w < kWarps; ++w)
    result = umax(result, kb.load(i32(), kb.bytePtr(scratch, 4 * w)));
  return result;
}

Value QuantizeKernelEmitter::blockAbsMax(ArrayRef<Value> values) {
  // Same scale as the unsigned maximum of |x|'s bits: the maxima agree
  // where nothing is NaN, and are both NaN otherwise. (|x| by its bits:
  // convert-gpu-to-nvvm sends llvm.fabs to libdevice.)
  auto abs = [&](Value v) { return fromBits(absBits(v)); };
  Value m = abs(values[0]);
  for (Value v : values.drop_front())
    m = fmaxNaN(m, abs(v));
  return m;
}

Value QuantizeKernelEmitter::stashOffset(int64_t index) {
  // Consecutive threads' 16-byte vectors side by side: conflict-free.
  return kb.mul(kb.add(tid, kb.i32(index * kQuantizeThreads)), kb.i32(16));
}

SmallVector<Value> QuantizeKernelEmitter::loadStashedSegment(int64_t s,
                                                             bool zeroOutside) {
  int64_t elementBytes = p.inputType.getIntOrFloatBitWidth() / 8;
  int64_t perLoad = 16 / elementBytes;
  auto loadType = VectorType::get({perLoad}, p.inputType);
  auto f32Vector = VectorType::get({perLoad}, f32());
  Value smem = kb.dynamicSharedMemory();
  // The stash holds what the thread loaded; where it loaded nothing (a
  // partial tile), zeros are selected.
  Value valid;
  if (zeroOutside && guardTile) {
    Value firstRow = kb.mul(rowTile, kb.i32(kQuantizeTileRows));
    Value row = kb.add(firstRow, kb.add(rowInTile, kb.i32(kRowStep * s)));
    Value firstCol = kb.mul(colTile, kb.i32(kQuantizeTileCols));
    Value col = kb.add(firstCol, kb.mul(chunk, kb.i32(kVector)));
    Value colValid = kb.ult(col, kb.i32(p.cols));
    valid = kb.andi(kb.ult(row, numRows()), colValid);
  }
  SmallVector<Value> values;
  for (int64_t index = s * kVector / perLoad;
       index < (s + 1) * kVector / perLoad; ++index) {
    Value v = LLVM::LoadOp::create(b, loadType,
                                   kb.bytePtr(smem, stashOffset(index)),
                                   /*alignment=*/16);
    if (valid) {
      Value zero = arith::ConstantOp::create(
          b, DenseElementsAttr::get(loadType,
                                    b.getFloatAttr(p.inputType, 0.0)));
      v = select(valid, v, zero);
    }
    if (!p.inputType.isF32())
      v = arith::ExtFOp::create(b, f32Vector, v);
    for (int64_t e = 0; e < perLoad; ++e)
      values.push_back(LLVM::ExtractElementOp::create(b, v, kb.i32(e)));
  }
  return values;
}

SmallVector<Value> QuantizeKernelEmitter::loadTile(bool stash) {
  int64_t elementBytes = p.inputType.getIntOrFloatBitWidth() / 8;
  bool guarded = guardTile;
  Value col = kb.add(kb.mul(colTile, kb.i32(kQuantizeTileCols)),
                     kb.mul(chunk, kb.i32(kVector)));
  Value colValid = kb.ult(col, kb.i32(p.cols));
  // Loads of 16 bytes: 8 bf16/f16 or 4 f32.
  int64_t perLoad = 16 / elementBytes;
  auto loadType = VectorType::get({perLoad}, p.inputType);
  auto f32Vector = VectorType::get({perLoad}, f32());

  SmallVector<Value> values;
  for (int64_t i = 0; i < kRowsPerThread; ++i) {
    Value row = kb.add(kb.mul(rowTile, kb.i32(kQuantizeTileRows)),
                       kb.add(rowInTile, kb.i32(kRowStep * i)));
    Value index = arith::AddIOp::create(
        b, arith::MulIOp::create(b, arith::ExtUIOp::create(b, b.getI64Type(), row),
                                 kb.i64(p.cols)),
        arith::ExtUIOp::create(b, b.getI64Type(), col));
    auto loadRow = [&]() -> SmallVector<Value> {
      SmallVector<Value> parts;
      for (int64_t part = 0; part < kVector / perLoad; ++part) {
        Value ptr = kb.globalElementPtr(
            x, arith::AddIOp::create(b, index, kb.i64(part * perLoad)),
            elementBytes);
        Value v = LLVM::LoadOp::create(b, loadType, ptr, /*alignment=*/16);
        if (stash) {
          Value smem = kb.dynamicSharedMemory();
          LLVM::StoreOp::create(
              b, v,
              kb.bytePtr(smem, stashOffset(i * (kVector / perLoad) + part)),
              /*alignment=*/16);
        }
        if (!p.inputType.isF32())
          v = arith::ExtFOp::create(b, f32Vector, v);
        parts.push_back(v);
      }
      return parts;
    };
    SmallVector<Value> parts;
    if (guarded) {
      Value valid = kb.andi(kb.ult(row, numRows()), colValid);
      SmallVector<Type> types(kVector / perLoad, f32Vector);
      auto ifOp = scf::IfOp::create(b, types, valid, /*withElse=*/true);
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        scf::YieldOp::create(b, loadRow());
        b.setInsertionPointToStart(ifOp.elseBlock());
        Value zero = arith::ConstantOp::create(
            b, DenseElementsAttr::get(f32Vector, b.getF32FloatAttr(0.f)));
        scf::YieldOp::create(b, SmallVector<Value>(types.size(), zero));
      }
      parts = SmallVector<Value>(ifOp.getResults().begin(), ifOp.getResults().end());
    } else {
      parts = loadRow();
    }
    for (Value part : parts)
      for (int64_t e = 0; e < perLoad; ++e)
        values.push_back(LLVM::ExtractElementOp::create(b, part, kb.i32(e)));
  }
  return values;
}

/// The f32 transpose tile holds row r of the input tile in 32 groups of 4
/// floats. Group g of row r is stored at group g ^ (g >> 3 & 1) ^ (r >> 3 &
/// 7): the column reads (a quarter warp reads one group of the rows 8c + j,
/// c < 8) and the row writes (a quarter warp writes the groups 2c + h of a
/// row) then both touch 8 distinct 16-byte bank quads, conflict-free.
Value QuantizeKernelEmitter::swizzledOffset(Value row, Value group) {
  Value physical =
      xori(xori(group, kb.andi(shr(group, kb.i32(3)), kb.i32(1))),
           kb.andi(shr(row, kb.i32(3)), kb.i32(7)));
  return kb.add(kb.mul(row, kb.i32(kTransposeRowBytes)),
                kb.mul(physical, kb.i32(kGroupBytes)));
}

void QuantizeKernelEmitter::storeTileToShared(ArrayRef<Value> values) {
  Value smem = kb.dynamicSharedMemory();
  auto vec4 = VectorType::get({4}, f32());
  for (int64_t i = 0; i < kRowsPerThread; ++i) {
    Value row = kb.add(rowInTile, kb.i32(kRowStep * i));
    for (int64_t h = 0; h < kVector / 4; ++h) {
      Value group = kb.add(kb.mul(chunk, kb.i32(kVector / 4)), kb.i32(h));
      Value v = LLVM::PoisonOp::create(b, vec4);
      for (int64_t e = 0; e < 4; ++e)
        v = LLVM::InsertElementOp::create(b, v, values[i * kVector + 4 * h + e],
                                          kb.i32(e));
      LLVM::StoreOp::create(b, v, kb.bytePtr(smem, swizzledOffset(row, group)),
                            /*alignment=*/16);
    }
  }
}

SmallVector<Value> QuantizeKernelEmitter::loadTransposedSegments() {
  // 16-byte reads: group rowInTile + 16 i2 (input columns 4g..4g+3) of the
  // input rows 8 * chunk + j give element j of 4 segments, the transposed
  // rows 4g + k (see OutputTile::rowOffset).
  Value smem = kb.dynamicSharedMemory();
  auto vec4 = VectorType::get({4}, f32());
  SmallVector<Value> segments(kSegments * kVector);
  for (int64_t i2 = 0; i2 < 2; ++i2) {
    Value group = kb.add(rowInTile, kb.i32(16 * i2));
    for (int64_t j = 0; j < kVector; ++j) {
      Value row = kb.add(kb.mul(chunk, kb.i32(kVector)), kb.i32(j));
      Value v = LLVM::LoadOp::create(
          b, vec4, kb.bytePtr(smem, swizzledOffset(row, group)),
          /*alignment=*/16);
      for (int64_t k = 0; k < 4; ++k)
        segments[(4 * i2 + k) * kVector + j] =
            LLVM::ExtractElementOp::create(b, v, kb.i32(k));
    }
  }
  return segments;
}

/// encodeUe8m0RoundUp (lib/Numerics/Formats.cpp) in integer arithmetic.
Value QuantizeKernelEmitter::ue8m0RoundUp(Value y) {
  if (p.hardwareUe8m0) {
    // sm_100a: cvt.rp.satfinite.ue8m0x2.f32 (PTX ISA 9.7.9.21), the
    // instruction the software form below reproduces.
    Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
        b, b.getI16Type(), y, y, NVVM::FPRoundingMode::RP,
        NVVM::SaturationMode::SATFINITE, /*relu=*/false,
        Float8E8M0FNUType::get(b.getContext()));
    return arith::ExtUIOp::create(
        b, i32(), arith::TruncIOp::create(b, b.getI8Type(), pair));
  }
  Value absY = absBits(y);
  Value exponent = shr(absY, kb.i32(23));
  Value mantissa = kb.andi(absY, kb.i32(kF32MantMask));
  Value nonzeroMantissa = cmpi(arith::CmpIPredicate::ne, mantissa, kb.i32(0));
  Value roundsUp =
      kb.andi(nonzeroMantissa,
              kb.ult(exponent, kb.i32(kUe8m0MaxFinite)));
  Value normal = select(roundsUp, kb.add(exponent, kb.i32(1)), exponent);
  // Subnormals: (0, 2^-127] -> 0, (2^-127, 2^-126) -> 1.
  Value subnormal = arith::ExtUIOp::create(
      b, i32(), cmpi(arith::CmpIPredicate::ugt, mantissa, kb.i32(0x400000)));
  Value code = select(kb.eq(exponent, kb.i32(0)), subnormal, normal);
  code = select(kb.eq(absY, kb.i32(kF32Inf)), kb.i32(kUe8m0MaxFinite), code);
  return select(cmpi(arith::CmpIPredicate::ugt, absY, kb.i32(kF32Inf)),
                kb.i32(kUe8m0NaN), code);
}

/// mxScaleExponent's OCP rule: floor(log2 amax) - emax_elem, clamped.
Value QuantizeKernelEmitter::ue8m0Ocp(Value amaxBits) {
  Value exponent = shr(amaxBits, kb.i32(23));
  Value mantissa = kb.andi(amaxBits, kb.i32(kF32MantMask));
  // Subnormal amax: floor(log2) = msb(mantissa) - 149.
  Value clz = LLVM::CountLeadingZerosOp::create(b, i32(), mantissa,
                                                b.getBoolAttr(false));
  Value subnormalLog2 = kb.sub(kb.i32(31 - 149), clz);
  Value log2 = select(kb.eq(exponent, kb.i32(0)), subnormalLog2,
                      kb.sub(exponent, kb.i32(127)));
  int64_t emax = num::maxExponent(isa<Float8E5M2Type>(p.elementType)
                                      ? num::Format::E5M2
                                      : num::Format::E4M3);
  Value e = kb.sub(log2, kb.i32(emax));
  e = arith::MaxSIOp::create(b, e, kb.i32(-127));
  e = arith::MinSIOp::create(b, e, kb.i32(127));
  Value code = kb.add(e, kb.i32(127));
  code = select(kb.eq(amaxBits, kb.i32(0)), kb.i32(0), code);
  code = select(kb.eq(amaxBits, kb.i32(kF32Inf)), kb.i32(kUe8m0MaxFinite), code);
  return select(cmpi(arith::CmpIPredicate::ugt, amaxBits, kb.i32(kF32Inf)),
                kb.i32(kUe8m0NaN), code);
}

/// currentScalingScale / blockwiseScale / mxScaleExponent of a block whose
/// amax has the (sign-free) bits `amaxBits`. Every multiplier but a given
/// scale's is positive and finite, or NaN (an MX block with a NaN).
BlockScale QuantizeKernelEmitter::computeScale(Value amaxBits) {
  using Rule = QuantizeProblem::Rule;
  num::Format format = isa<Float8E5M2Type>(p.elementType) ? num::Format::E5M2
                                                          : num::Format::E4M3;
  Value one = kb.f32(1.f);
  auto currentRule = [&](Value amax, float epsilon, bool pow2) {
    auto [scale, scaleInv] =
        emitCurrentScalingScale(b, amax, p.elementType, epsilon, pow2);
    return BlockScale{scale, scaleInv};
  };
  auto clamp = [&](Value amax) {
    if (p.amaxClamp == 0.f)
      return amax;
    return select(arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, amax,
                                        kb.f32(p.amaxClamp)),
                  kb.f32(p.amaxClamp), amax);
  };
  auto mxCode = [&](Value code) {
    // mxQuantizeMultiplier: 2^(127 - e), exact; 0xFF -> NaN.
    Value multBits = select(kb.eq(code, kb.i32(kUe8m0NaN)),
                            kb.i32(kF32QuietNaN), powerOfTwoInverse(kb, code));
    return BlockScale{fromBits(multBits),
                      arith::TruncIOp::create(b, b.getI8Type(), code)};
  };

  Value amax = fromBits(amaxBits);
  switch (p.rule) {
  case Rule::Tensor:
    llvm_unreachable("per-tensor scales come from tensorScale()");
  case Rule::Current:
    return currentRule(amax, p.epsilon, p.pow2);
  case Rule::BlockwisePow2: {
    BlockScale scale = currentRule(clamp(amax), 0.f, /*pow2=*/true);
    // As MX scales: the UE8M0 code of the power of two is its biased
    // exponent field (scale_inv is positive and finite; 2^-127, the
    // subnormal, has field 0, UE8M0's 2^-127).
    if (p.mxScales)
      scale.stored = arith::TruncIOp::create(
          b, b.getI8Type(), shr(bits(scale.stored), kb.i32(23)));
    return scale;
  }
  case Rule::BlockwiseF32: {
    Value clamped = clamp(amax);
    Value cBits = bits(clamped);
    Value scaleInv = divf(clamped, kb.f32(num::maxFinite(num::Format::E4M3)));
    Value usable =
        kb.andi(kb.andi(cmpi(arith::CmpIPredicate::ne, cBits, kb.i32(0)),
                        kb.ult(cBits, kb.i32(kF32Inf))),
                cmpi(arith::CmpIPredicate::ne, bits(scaleInv), kb.i32(0)));
    Value scale = finiteOrMax(kb, divf(one, scaleInv));
    return BlockScale{select(usable, scale, one), select(usable, scaleInv, one)};
  }
  case Rule::MXRoundUp: {
    uint32_t rcp = format == num::Format::E4M3 ? num::kRcpE4M3MaxBits
                                               : num::kRcpE5M2MaxBits;
    Value y = arith::MulFOp::create(b, amax, fromBits(kb.i32(rcp)));
    return mxCode(ue8m0RoundUp(y));
  }
  case Rule::MXOcp:
    return mxCode(ue8m0Ocp(amaxBits));
  }
  llvm_unreachable("unknown rule");
}

Value mlir::fp8::emitFiniteOrFltMax(ImplicitLocOpBuilder &b, Value scale) {
  KernelBuilder kb(b);
  return arith::SelectOp::create(
      b, kb.eq(kb.absF32Bits(scale), kb.i32(kF32Inf)), kb.f32(FLT_MAX), scale);
}

std::pair<Value, Value>
mlir::fp8::emitCurrentScalingScale(ImplicitLocOpBuilder &b, Value amax,
                                   Type elementType, float epsilon, bool pow2,
                                   bool amaxMayBeNegative) {
  assert(epsilon >= 0.f && "the recipe's epsilon is verified non-negative");
  KernelBuilder kb(b);
  num::Format format = isa<Float8E5M2Type>(elementType) ? num::Format::E5M2
                                                        : num::Format::E4M3;
  auto bits = [&](Value f) {
    return arith::BitcastOp::create(b, b.getI32Type(), f);
  };
  auto fromBits = [&](Value i) {
    return arith::BitcastOp::create(b, b.getF32Type(), i);
  };
  if (epsilon != 0.f || amaxMayBeNegative) // amax < epsilon -> epsilon
    amax = arith::SelectOp::create(
        b,
        arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, amax,
                              kb.f32(epsilon)),
        kb.f32(epsilon), amax);
  // Finite and nonzero. amax is now >= +0, -0 or NaN (a negative number is
  // below epsilon >= 0), so its bits are nonzero and below inf's exactly
  // then, and the scale maxFinite / amax is positive.
  Value aBits = bits(amax);
  Value usable =
      kb.andi(arith::CmpIOp::create(b, arith::CmpIPredicate::ne, aBits,
                                    kb.i32(0)),
              kb.ult(aBits, kb.i32(kF32Inf)));
  Value one = kb.f32(1.f);
  Value scale = arith::SelectOp::create(
      b, usable,
      finiteOrMax(kb, arith::DivFOp::create(
                          b, kb.f32(num::maxFinite(format)), amax)),
      one);
  if (!pow2)
    return {scale, arith::DivFOp::create(b, one, scale)};
  // maxFinite / amax >= maxFinite / FLT_MAX is normal, so the power of two
  // is 2^(e - 127) with 1 <= e <= 254, and its inverse is exact.
  Value exponentBits = kb.andi(bits(scale), kb.i32(kF32SignAndExponentMask));
  return {fromBits(exponentBits),
          fromBits(powerOfTwoInverse(
              kb, arith::ShRUIOp::create(b, exponentBits, kb.i32(23))))};
}

BlockScale QuantizeKernelEmitter::tensorScale() {
  Value value = kb.load(f32(), scaleOrAmax);
  if (p.scaleSource == QuantizeScaleSource::FromAmax)
    return computeScale(absBits(value));
  return BlockScale{value, divf(kb.f32(1.f), value)};
}

Value QuantizeKernelEmitter::pack8(ArrayRef<Value> inputs,
                                   ArrayRef<Value> scaled, Value signMask,
                                   Value highSignMask) {
  // cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b puts a in d[15:8] and b in
  // d[7:0]: element 2k + 1 goes in `a` so that bytes stay in memory order.
  //
  // The GPU's f32 multiply returns the canonical (positive) NaN, while the
  // reference's host product keeps the NaN operand's sign (encodeSatFinite:
  // sign | NaN code): x * scale is x for a NaN x and a finite scale, and the
  // (positive) NaN multiplier of a NaN MX block otherwise. So the bytes of
  // negative NaN inputs get their sign bit when the multiplier is a number.
  // With `signMask` (0x80808080 for a positive finite multiplier, 0 for a
  // NaN one), every byte gets its input's sign: cvt keeps the sign of every
  // other product, which is the input's, so only NaN bytes change. Without
  // it (a number that is not positive and finite), each input is compared.
  // Per-element multipliers (untransposed columnwise blocks) take the masks
  // byte by byte, `highSignMask` for the second word.
  auto pair = VectorType::get({2}, b.getI16Type());
  SmallVector<Value> words;
  for (int64_t w = 0; w < 2; ++w) {
    Value halves = LLVM::PoisonOp::create(b, pair);
    for (int64_t k = 0; k < 2; ++k) {
      int64_t e = 4 * w + 2 * k;
      Value codes = NVVM::ConvertF32x2ToF8x2Op::create(
          b, b.getI16Type(), scaled[e + 1], scaled[e],
          NVVM::FPRoundingMode::RN, NVVM::SaturationMode::SATFINITE,
          /*relu=*/false, p.elementType);
      halves = LLVM::InsertElementOp::create(b, halves, codes, kb.i32(k));
    }
    Value word = LLVM::BitcastOp::create(b, i32(), halves);
    ArrayRef<Value> four = inputs.slice(4 * w, 4);
    if (signMask) {
      // Byte 3 (the sign) of each input, in byte order: prmt selectors
      // pick bytes 0-3 of the first operand and 4-7 of the second.
      Value low = prmt(bits(four[0]), bits(four[1]), 0x0073);
      Value high = prmt(bits(four[2]), bits(four[3]), 0x7300);
      Value mask = w == 1 && highSignMask ? highSignMask : signMask;
      word = ori(word, kb.andi(prmt(low, high, 0x7610), mask));
    } else {
      for (int64_t e = 0; e < 4; ++e) {
        Value negativeNaN = cmpi(arith::CmpIPredicate::ugt, bits(four[e]),
                                 kb.i32(kF32SignAndExponentMask));
        word = ori(word, select(negativeNaN, kb.i32(0x80 << (8 * e)),
                                kb.i32(0)));
      }
    }
    words.push_back(word);
  }
  Value packed = LLVM::PoisonOp::create(b, VectorType::get({2}, i32()));
  for (int64_t w = 0; w < 2; ++w)
    packed = LLVM::InsertElementOp::create(b, packed, words[w], kb.i32(w));
  return packed;
}

void QuantizeKernelEmitter::storeBlockScale(const OutputTile &out,
                                            Value segment, Value stored,
                                            Value isStoringLane) {
  Value rowOffset =
      out.transposed
          ? kb.add(kb.mul(shr(segment, kb.i32(2)), kb.i32(64)),
                   kb.andi(segment, kb.i32(3)))
          : kb.mul(segment, kb.i32(kRowStep));
  Value rowInOut = kb.add(out.rowBase, rowOffset);
  if (p.hasMXScaleLayout()) {
    // Byte (r % 32) * 16 + (r % 128) / 32 * 4 + kb % 4 of atom
    // (r / 128, kb / 4), atoms K-fastest; padding rows/blocks of an atom
    // are written too (they lie inside the scale tensor). A 1x128 tile's
    // code fills the four bytes of its row in the atom.
    Value outColTiles =
        ShapedType::isDynamic(out.cols)
            ? numRowTiles()
            : kb.i32(QuantizeProblem::ceilDiv(out.cols, kQuantizeTileCols));
    Value atom = kb.add(kb.mul(out.rowTile, outColTiles), out.colTile);
    Value block = p.mxScales ? Value() : kb.divu(chunk, kb.i32(4));
    Value offset = atomByteOffset(atom, rowInOut, block);
    auto store = [&] {
      kb.store(p.mxScales ? repeatedCode(stored) : stored,
               kb.bytePtr(out.scales, offset));
    };
    if (isStoringLane)
      kb.ifThen(isStoringLane, store);
    else
      store();
    return;
  }
  // 1x128: MN-major [ceil(cols/128), roundup(rows, 4)].
  Value row = kb.add(kb.mul(out.rowTile, kb.i32(kQuantizeTileRows)), rowInOut);
  Value paddedRows =
      p.dynamicRows && !out.transposed
          ? kb.andi(kb.add(out.numRows, kb.i32(kMNMajorScaleAlignment - 1)),
                    kb.i32(-kMNMajorScaleAlignment))
          : kb.i32(QuantizeProblem::roundUp(out.rows, kMNMajorScaleAlignment));
  Value index = kb.add(kb.mul(out.colTile, paddedRows), row);
  Value valid = kb.ult(row, out.numRows);
  if (isStoringLane)
    valid = kb.andi(valid, isStoringLane);
  kb.ifThen(valid, [&] {
    kb.store(stored, kb.globalElementPtr(out.scales, index, 4));
  });
}

/// A 1 x blockCols block is 4 (1x32) or 16 (1x128) lanes of each of the 8
/// segments. Rather than every lane computing the scales of all 8 blocks
/// it takes part in, the lanes of a block exchange partial maxima so that
/// each lane ends up with the whole maxima of 8 / lanes-per-block blocks
/// (a transposing butterfly: at each step a lane keeps the half of its
/// partial maxima whose segments match its lane bit and sends the other
/// half), computes those blocks' scales and stores them, then every lane
/// fetches its segments' multipliers with one shuffle each.
SegmentMultipliers
QuantizeKernelEmitter::blockMultipliers(ArrayRef<Value> segments,
                                        const OutputTile &out) {
  int64_t lanesPerBlock = p.blockCols / kVector;
  SmallVector<Value> slots;
  for (int64_t s = 0; s < kSegments; ++s)
    slots.push_back(blockAbsMax(segments.slice(s * kVector, kVector)));
  // (lane offset, slot count kept) of each halving step; lanes differing
  // only in `duplicateLanes` end up with the same blocks.
  SmallVector<std::pair<int64_t, int64_t>> halvings;
  int64_t duplicateLanes = 0;
  for (int64_t offset = lanesPerBlock / 2; offset >= 1; offset /= 2) {
    if (slots.size() == 1) {
      slots[0] = fmaxNaN(slots[0], shuffleXor(slots[0], offset));
      duplicateLanes |= offset;
      continue;
    }
    int64_t half = slots.size() / 2;
    Value upper =
        cmpi(arith::CmpIPredicate::ne, kb.andi(lane, kb.i32(offset)), kb.i32(0));
    SmallVector<Value> kept;
    for (int64_t t = 0; t < half; ++t) {
      Value send = select(upper, slots[t], slots[t + half]);
      Value keep = select(upper, slots[t + half], slots[t]);
      kept.push_back(fmaxNaN(keep, shuffleXor(send, offset)));
    }
    halvings.push_back({offset, half});
    slots = std::move(kept);
  }

  // Slot t of a lane holds the block of segment t + sum(half * lane bit).
  Value segmentBase = kb.i32(0);
  for (auto [offset, half] : halvings)
    segmentBase = kb.add(
        segmentBase,
        select(cmpi(arith::CmpIPredicate::ne, kb.andi(lane, kb.i32(offset)),
                    kb.i32(0)),
               kb.i32(half), kb.i32(0)));
  Value isStoringLane =
      duplicateLanes ? kb.eq(kb.andi(lane, kb.i32(duplicateLanes)), kb.i32(0))
                     : Value();
  SegmentMultipliers multipliers;
  for (auto [t, maximum] : llvm::enumerate(slots)) {
    BlockScale scale = computeScale(bits(maximum));
    multipliers.slots.push_back(scale.multiplier);
    storeBlockScale(out, kb.add(segmentBase, kb.i32(t)), scale.stored,
                    isStoringLane);
  }
  multipliers.blockFirstLane =
      kb.andi(lane, kb.i32(~(lanesPerBlock - 1) & (kWarpThreads - 1)));
  for (int64_t s = 0; s < kSegments; ++s) {
    int64_t t = s % static_cast<int64_t>(slots.size());
    int64_t owner = 0;
    for (auto [offset, half] : halvings)
      if ((s - t) & half)
        owner |= offset;
    multipliers.slot.push_back(t);
    multipliers.owner.push_back(owner);
  }
  return multipliers;
}

void QuantizeKernelEmitter::storeColumnMaxima(ArrayRef<Value> values) {
  int64_t blocks = getColumnBlocksPerTile(p);
  int64_t iPerBlock = kRowsPerThread / blocks;
  Value smem = columnScratch();
  Value warp = kb.divu(tid, kb.i32(kWarpThreads));
  auto i32x8 = VectorType::get({kVector}, i32());

  // Each warp's column maxima of its two rows per i (lanes l, l ^ 16
  //    share the chunk), u32 [blocks][warps][128].
  for (int64_t blk = 0; blk < blocks; ++blk) {
    Value partial = LLVM::PoisonOp::create(b, i32x8);
    for (int64_t j = 0; j < kVector; ++j) {
      Value m = absBits(values[blk * iPerBlock * kVector + j]);
      for (int64_t i = blk * iPerBlock + 1; i < (blk + 1) * iPerBlock; ++i)
        m = umax(m, absBits(values[i * kVector + j]));
      partial = LLVM::InsertElementOp::create(b, partial, shuffleMax(m, {16}),
                                              kb.i32(j));
    }
    Value offset = kb.mul(
        kb.add(kb.mul(kb.add(kb.i32(blk * kWarps), warp),
                      kb.i32(kQuantizeTileCols)),
               kb.mul(chunk, kb.i32(kVector))),
        kb.i32(4));
    kb.ifThen(kb.ult(lane, kb.i32(kChunksPerRow)), [&] {
      LLVM::StoreOp::create(b, partial, kb.bytePtr(smem, offset),
                            /*alignment=*/16);
    });
  }
}

Value QuantizeKernelEmitter::storeColumnBlockScales() {
  int64_t blocks = getColumnBlocksPerTile(p);
  Value smem = columnScratch();
  int64_t partialBytes = blocks * kWarps * kQuantizeTileCols * 4;
  gpu::BarrierOp::create(b);

  // One thread per (block, column): the block's amax over the warps, its
  //    scale (scale_inv to global memory, the multiplier to shared memory).
  Value multipliers = kb.bytePtr(smem, partialBytes);
  int64_t pairs = blocks * kQuantizeTileCols;
  for (int64_t first = 0; first < pairs; first += kQuantizeThreads) {
    Value pair = kb.add(tid, kb.i32(first));
    kb.ifThen(kb.ult(pair, kb.i32(pairs)), [&] {
      Value blk = kb.divu(pair, kb.i32(kQuantizeTileCols));
      Value c = kb.remu(pair, kb.i32(kQuantizeTileCols));
      Value m;
      for (int64_t w = 0; w < kWarps; ++w) {
        Value index = kb.add(
            kb.mul(kb.add(kb.mul(blk, kb.i32(kWarps)), kb.i32(w)),
                   kb.i32(kQuantizeTileCols)),
            c);
        Value v = kb.load(i32(), kb.bytePtr(smem, kb.mul(index, kb.i32(4))));
        m = m ? umax(m, v) : v;
      }
      BlockScale scale = computeScale(m);
      kb.store(scale.multiplier,
               kb.bytePtr(multipliers, kb.mul(pair, kb.i32(4))));
      // The columnwise scales are those of x^T, whichever way its data is
      // stored: x's column colTile * 128 + c is x^T's row.
      Value col = kb.add(kb.mul(colTile, kb.i32(kQuantizeTileCols)), c);
      if (p.hasMXScaleLayout()) {
        // Byte (c % 32) * 16 + (c / 32) * 4 + blk of atom (colTile, rowTile);
        // a 128x1 block's code (mxScales) fills the four bytes of c.
        Value atom = kb.add(kb.mul(colTile, numRowTiles()), rowTile);
        Value offset =
            atomByteOffset(atom, c, p.mxScales ? Value() : blk);
        kb.store(p.mxScales ? repeatedCode(scale.stored) : scale.stored,
                 kb.bytePtr(columnwiseScale, offset));
      } else {
        // 128x1: MN-major [ceil(R/128), roundup(C, 4)].
        Value index = kb.add(
            kb.mul(rowTile,
                   kb.i32(QuantizeProblem::roundUp(p.cols,
                                                   kMNMajorScaleAlignment))),
            col);
        kb.ifThen(kb.ult(col, kb.i32(p.cols)), [&] {
          kb.store(scale.stored,
                   kb.globalElementPtr(columnwiseScale, index, 4));
        });
      }
    });
  }
  gpu::BarrierOp::create(b);
  return multipliers;
}

void QuantizeKernelEmitter::quantizeOutput(
    ArrayRef<Value> segments, OutputKind kind,
    const std::optional<BlockScale> &shared,
    function_ref<SmallVector<Value>(int64_t)> loadSegment) {
  bool transposed = kind == OutputKind::ColumnwiseTransposed;
  bool columnBlocks = kind == OutputKind::ColumnwiseUntransposed && !shared;
  bool alsoUntransposed = kind == OutputKind::Rowwise && shared &&
                          p.hasUntransposedColumnwise();
  OutputTile out;
  out.transposed = transposed;
  out.rows = transposed ? p.cols : p.rows;
  out.cols = transposed ? p.rows : p.cols;
  out.rowTile = transposed ? colTile : rowTile;
  out.colTile = transposed ? rowTile : colTile;
  out.rowBase = transposed ? kb.mul(rowInTile, kb.i32(4)) : rowInTile;
  out.data = kind == OutputKind::Rowwise ? rowwise : columnwise;
  out.scales = kind == OutputKind::Rowwise ? rowwiseScale : columnwiseScale;
  out.numRows = transposed ? kb.i32(p.cols) : numRows();
  bool guarded = guardTile;

  Value firstRow =
      kb.add(kb.mul(out.rowTile, kb.i32(kQuantizeTileRows)), out.rowBase);
  Value col = kb.add(kb.mul(out.colTile, kb.i32(kQuantizeTileCols)),
                     kb.mul(chunk, kb.i32(kVector)));
  // A transposed output of a run-time R has rows of R bytes.
  bool dynamicCols = ShapedType::isDynamic(out.cols);
  Value numCols = dynamicCols ? numRows() : kb.i32(out.cols);
  Value colValid = kb.ult(col, numCols);
  Value rowBytes =
      dynamicCols ? arith::ExtUIOp::create(b, b.getI64Type(), numCols).getResult()
                  : kb.i64(out.cols);
  // Every segment's address is this one plus a constant (plus a multiple
  // of the run-time row length).
  Value firstOffset = arith::AddIOp::create(
      b,
      arith::MulIOp::create(
          b, arith::ExtUIOp::create(b, b.getI64Type(), firstRow), rowBytes),
      arith::ExtUIOp::create(b, b.getI64Type(), col));
  Value base = kb.bytePtr(out.data, firstOffset);
  // The untransposed columnwise output: the same bytes at the same offsets
  // (x's layout, the same scale).
  Value untransposedBase =
      alsoUntransposed ? kb.bytePtr(columnwise, firstOffset) : Value();

  SegmentMultipliers perBlock;
  // Untransposed columnwise blocks: each element has its column's
  // multiplier, the same for the segments of one block of rows
  // (segmentsPerColumnBlock of them), read from shared memory where a block
  // starts, with the byte sign masks of pack8 (one per word).
  Value columnMultipliers;
  int64_t segmentsPerColumnBlock = 0;
  SmallVector<Value> elementMultipliers;
  Value columnSignMasks[2];
  if (columnBlocks) {
    assert(columnBlockMultipliers && "storeColumnBlockScales comes first");
    columnMultipliers = columnBlockMultipliers;
    segmentsPerColumnBlock = kSegments / getColumnBlocksPerTile(p);
  } else if (!shared && rowMultipliers.empty()) {
    perBlock = blockMultipliers(segments, out);
  }
  auto loadColumnMultipliers = [&](int64_t blk) {
    Value offset = kb.mul(kb.add(kb.i32(blk * kQuantizeTileCols),
                                 kb.mul(chunk, kb.i32(kVector))),
                          kb.i32(4));
    Value v = LLVM::LoadOp::create(b, VectorType::get({kVector}, f32()),
                                   kb.bytePtr(columnMultipliers, offset),
                                   /*alignment=*/16);
    elementMultipliers.clear();
    for (int64_t j = 0; j < kVector; ++j)
      elementMultipliers.push_back(
          LLVM::ExtractElementOp::create(b, v, kb.i32(j)));
    for (int64_t w = 0; w < 2; ++w) {
      // Blockwise multipliers are positive and finite; MX ones may be NaN.
      if (!p.isMX()) {
        columnSignMasks[w] = kb.i32(0x80808080);
        continue;
      }
      Value mask;
      for (int64_t e = 0; e < 4; ++e) {
        Value byte = select(
            kb.ult(bits(elementMultipliers[4 * w + e]), kb.i32(kF32Inf)),
            kb.i32(0x80 << (8 * e)), kb.i32(0));
        mask = mask ? ori(mask, byte) : byte;
      }
      columnSignMasks[w] = mask;
    }
  };

  auto emitSegments = [&](bool compareEachInput) {
    for (int64_t s = 0; s < kSegments; ++s) {
      SmallVector<Value> loaded;
      ArrayRef<Value> inputs;
      if (loadSegment) {
        loaded = loadSegment(s);
        inputs = loaded;
      } else {
        inputs = segments.slice(s * kVector, kVector);
      }
      SmallVector<Value> scaled;
      Value signMask, highSignMask;
      if (columnBlocks) {
        if (s % segmentsPerColumnBlock == 0)
          loadColumnMultipliers(s / segmentsPerColumnBlock);
        for (auto [v, m] : llvm::zip_equal(inputs, elementMultipliers))
          scaled.push_back(arith::MulFOp::create(b, v, m));
        signMask = columnSignMasks[0];
        highSignMask = columnSignMasks[1];
      } else {
        Value multiplier =
            shared                   ? shared->multiplier
            : !rowMultipliers.empty() ? rowMultipliers[s]
                                      : shuffleIdx(perBlock.slots[perBlock.slot[s]],
                                                   ori(perBlock.blockFirstLane,
                                                       kb.i32(perBlock.owner[s])));
        for (Value v : inputs)
          scaled.push_back(arith::MulFOp::create(b, v, multiplier));
        if (!compareEachInput)
          signMask = select(kb.ult(bits(multiplier), kb.i32(kF32Inf)),
                            kb.i32(0x80808080), kb.i32(0));
      }
      Value packed = pack8(inputs, scaled, signMask, highSignMask);
      int64_t rowOffset = out.rowOffset(s);
      auto store = [&] {
        Value ptr = dynamicCols
                        ? kb.bytePtr(base, arith::MulIOp::create(
                                               b, rowBytes, kb.i64(rowOffset)))
                        : kb.bytePtr(base, rowOffset * out.cols);
        LLVM::StoreOp::create(b, packed, ptr, /*alignment=*/8);
        if (untransposedBase)
          LLVM::StoreOp::create(
              b, packed, kb.bytePtr(untransposedBase, rowOffset * out.cols),
              /*alignment=*/8);
      };
      if (guarded)
        kb.ifThen(kb.andi(kb.ult(kb.add(firstRow, kb.i32(rowOffset)),
                                 out.numRows),
                          colValid),
                  store);
      else
        store();
    }
  };
  if (p.scaleSource != QuantizeScaleSource::Given) {
    emitSegments(/*compareEachInput=*/false);
    return;
  }
  // A given scale may be anything: the sign-mask form needs it positive and
  // finite, or NaN (one uniform branch).
  Value scaleBits = bits(shared->multiplier);
  Value positiveFinite = kb.ult(kb.sub(scaleBits, kb.i32(1)),
                                kb.i32(kF32Inf - 1));
  Value isNaN =
      cmpi(arith::CmpIPredicate::ugt, absBits(shared->multiplier),
           kb.i32(kF32Inf));
  auto ifOp = scf::IfOp::create(b, TypeRange(), ori(positiveFinite, isNaN),
                                /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  emitSegments(/*compareEachInput=*/false);
  b.setInsertionPointToStart(ifOp.elseBlock());
  emitSegments(/*compareEachInput=*/true);
}

void QuantizeKernelEmitter::emit(gpu::GPUFuncOp func) {
  Block &entry = func.getBody().front();
  unsigned arg = 0;
  x = entry.getArgument(arg++);
  if (p.isAmaxOnly) {
    amaxOut = entry.getArgument(arg++);
  } else {
    if (p.scaleSource != QuantizeScaleSource::PerBlock)
      scaleOrAmax = entry.getArgument(arg++);
    if (p.rowwise) {
      rowwise = entry.getArgument(arg++);
      rowwiseScale = entry.getArgument(arg++);
    }
    if (p.columnwise) {
      columnwise = entry.getArgument(arg++);
      columnwiseScale = entry.getArgument(arg++);
    }
    if (p.historyLength > 0)
      amaxOut = entry.getArgument(arg++);
  }
  if (p.dynamicRows)
    dynamicRows = entry.getArgument(arg++);

  tid = kb.threadIdX();
  lane = kb.remu(tid, kb.i32(kWarpThreads));
  chunk = kb.remu(tid, kb.i32(kChunksPerRow));
  rowInTile = kb.divu(tid, kb.i32(kChunksPerRow));
  colTile = kb.blockIdX();
  rowTile = arith::IndexCastUIOp::create(
      b, i32(), gpu::BlockIdOp::create(b, gpu::Dimension::y));

  if (p.granularity == GranularityKind::Row) {
    if (p.columnwise) {
      // Its row tiles' loads and casts are guarded at the edges of x.
      guardTile = hasPartialTiles();
      emitColumns();
    } else {
      emitRows();
    }
  } else if (hasColumnBlocks(p) && hasPartialTiles()) {
    // The guards of a partial tile cost a cast with column blocks about a
    // sixth of its bandwidth (MX, run-time R): whole tiles take a copy of
    // the code without them (a CTA-uniform branch).
    Value lastRow = kb.add(kb.mul(rowTile, kb.i32(kQuantizeTileRows)),
                           kb.i32(kQuantizeTileRows));
    Value lastCol = kb.add(kb.mul(colTile, kb.i32(kQuantizeTileCols)),
                           kb.i32(kQuantizeTileCols));
    Value rowsInside = cmpi(arith::CmpIPredicate::ule, lastRow, numRows());
    Value colsInside =
        cmpi(arith::CmpIPredicate::ule, lastCol, kb.i32(p.cols));
    Value whole = kb.andi(rowsInside, colsInside);
    auto ifOp = scf::IfOp::create(b, TypeRange(), whole, /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    emitTile();
    b.setInsertionPointToStart(ifOp.elseBlock());
    guardTile = true;
    emitTile();
  } else {
    guardTile = hasPartialTiles();
    emitTile();
  }
  gpu::ReturnOp::create(b);
}

void QuantizeKernelEmitter::emitTile() {
  SmallVector<Value> values = loadTile(/*stash=*/hasColumnBlocks(p));
  Value isFirstThread = kb.eq(tid, kb.i32(0));

  // The tensor's amax: into amax[0] (amax kernel) or history slot 0
  // (delayed-scaling cast), one atomic max per CTA. |x| bits compare as
  // unsigned integers in float order, NaN above inf (sticky).
  std::optional<Value> tileMax;
  auto getTileMax = [&]() {
    if (!tileMax) {
      Value m = absBits(values[0]);
      for (Value v : ArrayRef<Value>(values).drop_front())
        m = umax(m, absBits(v));
      tileMax = ctaMax(m);
    }
    return *tileMax;
  };
  if (amaxOut) {
    Value m = getTileMax();
    kb.ifThen(isFirstThread, [&] {
      LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::umax, amaxOut, m,
                                LLVM::AtomicOrdering::monotonic);
    });
  }
  if (p.isAmaxOnly)
    return;

  // Per-tensor and 128x128 scales are shared by every element of the tile.
  std::optional<BlockScale> shared;
  if (p.scaleSource != QuantizeScaleSource::PerBlock)
    shared = tensorScale();
  else if (p.blockRows == kQuantizeTileRows)
    shared = computeScale(getTileMax());
  if (shared) {
    Value first = kb.andi(isFirstThread,
                          kb.andi(kb.eq(colTile, kb.i32(0)),
                                  kb.eq(rowTile, kb.i32(0))));
    auto storeScale = [&](Value scales, int64_t index) {
      kb.store(shared->stored,
               kb.globalElementPtr(scales, kb.i32(index), 4));
    };
    if (p.granularity == GranularityKind::Tensor) {
      kb.ifThen(first, [&] {
        if (p.rowwise)
          storeScale(rowwiseScale, 0);
        if (p.columnwise)
          storeScale(columnwiseScale, 0);
      });
    } else if (p.mxScales) {
      // 128x128 as MX scales: the tile is one whole atom of x (rowwise) and
      // of x^T (columnwise), every byte its code; a word per thread.
      Value word = repeatedCode(shared->stored);
      Value offset = kb.mul(tid, kb.i32(4));
      auto fillAtom = [&](Value scales, Value atom) {
        kb.store(word,
                 kb.bytePtr(scales, kb.add(kb.mul(atom, kb.i32(kAtomBytes)),
                                           offset)));
      };
      kb.ifThen(kb.ult(tid, kb.i32(kAtomBytes / 4)), [&] {
        if (p.rowwise)
          fillAtom(rowwiseScale,
                   kb.add(kb.mul(rowTile, kb.i32(p.colTiles())), colTile));
        if (p.columnwise)
          fillAtom(columnwiseScale,
                   kb.add(kb.mul(colTile, numRowTiles()), rowTile));
      });
    } else {
      // 128x128: [ceil(R/128), ceil(C/128)] and its transpose.
      kb.ifThen(isFirstThread, [&] {
        if (p.rowwise)
          kb.store(shared->stored,
                   kb.globalElementPtr(
                       rowwiseScale,
                       kb.add(kb.mul(rowTile, kb.i32(p.colTiles())), colTile),
                       4));
        if (p.columnwise)
          kb.store(shared->stored,
                   kb.globalElementPtr(
                       columnwiseScale,
                       kb.add(kb.mul(colTile, numRowTiles()), rowTile),
                       4));
      });
    }
  }

  // The transpose tile is written first so that the rowwise work hides the
  // stores; the transposed columnwise output reads it back after one
  // barrier. An untransposed one with a shared scale is the rowwise bytes.
  // With per-block scales, the passes after the rowwise output read the
  // stash: the column maxima, and after the column scales the columnwise
  // cast; x is read once.
  if (p.needsTranspose())
    storeTileToShared(values);
  if (hasColumnBlocks(p)) {
    // The warp barrier, which LLVM treats as touching memory, keeps it from
    // forwarding the stash stores into the loads (which would keep the
    // values live again).
    NVVM::SyncWarpOp::create(b, kb.i32(-1));
    // The rowwise cast reads the stash too (the values are live only until
    // its block maxima) where registers are short: 1x128 blocks (58-64
    // registers instead of 80) and partial tiles (whose guards spill at
    // 80). Whole MX tiles keep them: at 64 registers, 4 CTAs of 50 KiB of
    // shared memory an SM leave 28 KiB of L1 for the loads in flight, and
    // ran 13% slower on an H200 than 3 CTAs at 80.
    bool reload = guardTile || !p.isMX();
    if (p.rowwise && reload)
      quantizeOutput(values, OutputKind::Rowwise, shared,
                     [&](int64_t s) { return loadStashedSegment(s); });
    else if (p.rowwise)
      quantizeOutput(values, OutputKind::Rowwise, shared);
  } else if (p.rowwise) {
    quantizeOutput(values, OutputKind::Rowwise, shared);
  }
  if (p.needsTranspose()) {
    gpu::BarrierOp::create(b);
    quantizeOutput(loadTransposedSegments(), OutputKind::ColumnwiseTransposed,
                   shared);
  }
  if (p.hasUntransposedColumnwise()) {
    if (hasColumnBlocks(p)) {
      // The inputs come back from the stash rather than staying in
      // registers over the scale computation (they spill under the
      // 80-register cap) or being read again from global memory.
      SmallVector<Value> stashed;
      for (int64_t s = 0; s < kSegments; ++s)
        llvm::append_range(stashed,
                           loadStashedSegment(s, /*zeroOutside=*/true));
      storeColumnMaxima(stashed);
      columnBlockMultipliers = storeColumnBlockScales();
      quantizeOutput({}, OutputKind::ColumnwiseUntransposed, shared,
                     [&](int64_t s) { return loadStashedSegment(s); });
    } else if (!p.rowwise) {
      quantizeOutput(values, OutputKind::ColumnwiseUntransposed, shared);
    }
  }
}

Value QuantizeKernelEmitter::rowChunk(const RowLayout &l, Value slab,
                                      int64_t k) {
  Value slabChunk = kb.mul(slab, kb.i32(l.chunksPerSlab()));
  Value firstChunk = kb.add(slabChunk, kb.remu(tid, kb.i32(l.threadsPerRow)));
  return kb.add(firstChunk, kb.i32(k * l.threadsPerRow));
}

Value QuantizeKernelEmitter::rowChunkIndex(Value row, Value chunk) {
  Value row64 = arith::ExtUIOp::create(b, b.getI64Type(), row);
  Value rowOffset = arith::MulIOp::create(b, row64, kb.i64(p.cols));
  Value chunkOffset = kb.mul(chunk, kb.i32(kVector));
  return arith::AddIOp::create(
      b, rowOffset, arith::ExtUIOp::create(b, b.getI64Type(), chunkOffset));
}

SmallVector<Value> QuantizeKernelEmitter::loadRowSlab(const RowLayout &l,
                                                      Value row, Value slab) {
  int64_t elementBytes = p.inputType.getIntOrFloatBitWidth() / 8;
  auto loadType = VectorType::get({4}, i32());
  SmallVector<Value> loads;
  for (int64_t k = 0; k < l.chunksPerThread; ++k) {
    Value chunk = rowChunk(l, slab, k);
    if (l.hasPartialSlab())
      chunk = arith::MinUIOp::create(b, chunk, kb.i32(l.chunksPerRow - 1));
    Value index = rowChunkIndex(row, chunk);
    for (int64_t part = 0; part < l.loadsPerChunk; ++part) {
      Value ptr = kb.globalElementPtr(
          x, arith::AddIOp::create(b, index, kb.i64(part * kVector / l.loadsPerChunk)),
          elementBytes);
      loads.push_back(LLVM::LoadOp::create(b, loadType, ptr, /*alignment=*/16));
    }
  }
  return loads;
}

Value QuantizeKernelEmitter::rowSlabMax(ArrayRef<Value> loads) {
  // |x|'s bits in the input type: their unsigned order is the f32 order of
  // |x| (NaN above inf), and the conversion to f32 keeps it.
  unsigned bitWidth = p.inputType.getIntOrFloatBitWidth();
  Type intType = b.getIntegerType(bitWidth);
  auto intVector = VectorType::get({128 / bitWidth}, intType);
  APInt absBitsMask = APInt::getSignedMaxValue(bitWidth);
  Value absMask = arith::ConstantOp::create(
      b, DenseElementsAttr::get(intVector, llvm::ArrayRef(absBitsMask)));
  Value m;
  for (Value v : loads) {
    Value a = kb.andi(LLVM::BitcastOp::create(b, intVector, v), absMask);
    m = m ? umax(m, a) : a;
  }
  Value result;
  for (int64_t e = 0; e < intVector.getNumElements(); ++e) {
    Value v = LLVM::ExtractElementOp::create(b, m, kb.i32(e));
    result = result ? umax(result, v) : v;
  }
  if (p.inputType.isF32())
    return result;
  if (p.inputType.isBF16())
    return shl(arith::ExtUIOp::create(b, i32(), result), kb.i32(16));
  Value half = arith::BitcastOp::create(b, p.inputType, result);
  return bits(arith::ExtFOp::create(b, f32(), half));
}

void QuantizeKernelEmitter::castRowSlab(const RowLayout &l,
                                        ArrayRef<Value> loads, Value row,
                                        Value rowValid, Value slab,
                                        Value multiplier) {
  Value signMask = select(kb.ult(bits(multiplier), kb.i32(kF32Inf)),
                          kb.i32(0x80808080), kb.i32(0));
  for (int64_t k = 0; k < l.chunksPerThread; ++k) {
    SmallVector<Value> inputs;
    for (int64_t part = 0; part < l.loadsPerChunk; ++part) {
      Value v = loads[k * l.loadsPerChunk + part];
      int64_t perLoad = kVector / l.loadsPerChunk;
      v = LLVM::BitcastOp::create(b, VectorType::get({perLoad}, p.inputType), v);
      if (!p.inputType.isF32())
        v = arith::ExtFOp::create(b, VectorType::get({perLoad}, f32()), v);
      for (int64_t e = 0; e < perLoad; ++e)
        inputs.push_back(LLVM::ExtractElementOp::create(b, v, kb.i32(e)));
    }
    SmallVector<Value> scaled;
    for (Value v : inputs)
      scaled.push_back(arith::MulFOp::create(b, v, multiplier));
    Value packed = pack8(inputs, scaled, signMask);
    Value chunk = rowChunk(l, slab, k);
    Value index = rowChunkIndex(row, chunk);
    Value valid = rowValid;
    if (l.hasPartialSlab()) {
      Value chunkValid = kb.ult(chunk, kb.i32(l.chunksPerRow));
      valid = valid ? kb.andi(valid, chunkValid) : chunkValid;
    }
    auto store = [&] {
      LLVM::StoreOp::create(b, packed, kb.globalElementPtr(rowwise, index, 1),
                            /*alignment=*/8);
    };
    if (valid)
      kb.ifThen(valid, store);
    else
      store();
  }
}

SmallVector<Value> QuantizeKernelEmitter::forEachRowTile(
    ValueRange inits, function_ref<SmallVector<Value>(ValueRange)> body) {
  auto loop = scf::ForOp::create(b, kb.i32(0), numRowTiles(), kb.i32(1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    // Without carried values the loop comes with its terminator.
    if (inits.empty())
      b.setInsertionPoint(loop.getBody()->getTerminator());
    else
      b.setInsertionPointToStart(loop.getBody());
    rowTile = loop.getInductionVar();
    SmallVector<Value> next = body(loop.getRegionIterArgs());
    if (!inits.empty())
      scf::YieldOp::create(b, next);
  }
  rowTile = Value();
  return SmallVector<Value>(loop.getResults().begin(), loop.getResults().end());
}

SmallVector<Value>
QuantizeKernelEmitter::maxAbsBitsOfColumns(ValueRange carried) {
  SmallVector<Value> values = loadTile();
  SmallVector<Value> next;
  for (int64_t k = 0; k < kVector; ++k) {
    Value m = carried[k];
    for (int64_t l = 0; l < kVector; ++l)
      m = umax(m, absBits(values[l * kVector + k]));
    next.push_back(m);
  }
  return next;
}

void QuantizeKernelEmitter::emitRows() {
  RowLayout l = getRowLayout(p);
  Value band = kb.add(kb.mul(rowTile, kb.i32(kRowBandsPerGridRow)), colTile);
  Value rowInBand = kb.divu(tid, kb.i32(l.threadsPerRow));
  Value row = kb.add(kb.mul(band, kb.i32(l.rowsPerCta)), rowInBand);
  // Rows past R (in the last band, or in the grid's last row of bands) load
  // row R - 1 (every thread takes part in the reduction's barrier) and
  // store nothing.
  Value rowValid, loadRow = row;
  if (p.dynamicRows || p.rows % (l.rowsPerCta * kRowBandsPerGridRow) != 0) {
    rowValid = kb.ult(row, numRows());
    Value lastRow = kb.sub(numRows(), kb.i32(1));
    loadRow = arith::MinUIOp::create(b, row, lastRow);
  }

  // The row's maximum of |x|'s bits: the thread's, then the row's lanes',
  // then (rows wider than a warp) the row's warps' through shared memory.
  SmallVector<Value> loads;
  Value m;
  if (l.slabs == 1) {
    loads = loadRowSlab(l, loadRow, kb.i32(0));
    m = rowSlabMax(loads);
  } else {
    auto loop = scf::ForOp::create(b, kb.i32(0), kb.i32(l.slabs), kb.i32(1),
                                   ValueRange{kb.i32(0)});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value slabMax = rowSlabMax(loadRowSlab(l, loadRow, loop.getInductionVar()));
    scf::YieldOp::create(b, umax(loop.getRegionIterArgs()[0], slabMax));
    b.setInsertionPointAfter(loop);
    m = loop.getResult(0);
  }
  SmallVector<int64_t> offsets;
  for (int64_t offset = std::min<int64_t>(l.threadsPerRow, kWarpThreads) / 2;
       offset >= 1; offset /= 2)
    offsets.push_back(offset);
  m = shuffleMax(m, offsets);
  if (l.threadsPerRow > kWarpThreads) {
    Value scratch = kb.dynamicSharedMemory();
    Value warp = kb.divu(tid, kb.i32(kWarpThreads));
    kb.ifThen(kb.eq(lane, kb.i32(0)), [&] {
      kb.store(m, kb.bytePtr(scratch, kb.mul(warp, kb.i32(4))));
    });
    gpu::BarrierOp::create(b);
    int64_t warpsPerRow = l.threadsPerRow / kWarpThreads;
    Value firstWarp = kb.mul(rowInBand, kb.i32(warpsPerRow));
    m = Value();
    for (int64_t w = 0; w < warpsPerRow; ++w) {
      Value offset = kb.mul(kb.add(firstWarp, kb.i32(w)), kb.i32(4));
      Value v = kb.load(i32(), kb.bytePtr(scratch, offset));
      m = m ? umax(m, v) : v;
    }
  }

  // The row's scale ([R, 1], stored by the row's first thread), then its
  // cast.
  BlockScale scale = computeScale(m);
  Value isFirst = kb.eq(kb.remu(tid, kb.i32(l.threadsPerRow)), kb.i32(0));
  kb.ifThen(rowValid ? kb.andi(isFirst, rowValid) : isFirst, [&] {
    kb.store(scale.stored, kb.globalElementPtr(rowwiseScale, row, 4));
  });
  if (l.slabs == 1) {
    castRowSlab(l, loads, row, rowValid, kb.i32(0), scale.multiplier);
    return;
  }
  auto loop = scf::ForOp::create(b, kb.i32(0), kb.i32(l.slabs), kb.i32(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value slab = loop.getInductionVar();
  castRowSlab(l, loadRowSlab(l, loadRow, slab), row, rowValid, slab,
              scale.multiplier);
}

void QuantizeKernelEmitter::emitColumns() {
  // Pass 1: each thread's maxima of |x| bits in its 8 columns (chunk) over
  // its 8 rows of every row tile (NaN above inf, sticky).
  SmallVector<Value> zeros(kVector, kb.i32(0));
  SmallVector<Value> maxima = forEachRowTile(zeros, [&](ValueRange carried) {
    return maxAbsBitsOfColumns(carried);
  });
  // Lanes l and l ^ 16 hold the same columns; the 8 warps' maxima meet in
  // shared memory (u32 [warps][128], after the transpose tile if any).
  Value scratch = kb.bytePtr(kb.dynamicSharedMemory(),
                             p.needsTranspose() ? kTransposeTileBytes : 0);
  Value warp = kb.divu(tid, kb.i32(kWarpThreads));
  auto i32x8 = VectorType::get({kVector}, i32());
  Value partial = LLVM::PoisonOp::create(b, i32x8);
  for (int64_t j = 0; j < kVector; ++j)
    partial = LLVM::InsertElementOp::create(
        b, partial, shuffleMax(maxima[j], {16}), kb.i32(j));
  Value chunkBytes = kb.mul(chunk, kb.i32(kVector * 4));
  Value warpRow = kb.mul(warp, kb.i32(kQuantizeTileCols * 4));
  kb.ifThen(kb.ult(lane, kb.i32(kChunksPerRow)), [&] {
    LLVM::StoreOp::create(b, partial,
                          kb.bytePtr(scratch, kb.add(warpRow, chunkBytes)),
                          /*alignment=*/16);
  });
  gpu::BarrierOp::create(b);

  // Each thread's 8 column scales (the 16 threads of a chunk alike); those
  // of row 0 store scale_inv ([C, 1]) and the multipliers, f32 [128] after
  // the maxima, where the cast of each row tile reads them.
  Value multipliers =
      kb.bytePtr(scratch, kWarps * kQuantizeTileCols * 4);
  Value isRow0 = kb.ult(tid, kb.i32(kChunksPerRow));
  for (int64_t j = 0; j < kVector; ++j) {
    Value m;
    for (int64_t w = 0; w < kWarps; ++w) {
      Value offset =
          kb.add(chunkBytes, kb.i32(w * kQuantizeTileCols * 4 + 4 * j));
      Value v = kb.load(i32(), kb.bytePtr(scratch, offset));
      m = m ? umax(m, v) : v;
    }
    BlockScale scale = computeScale(m);
    Value colInTile = kb.add(kb.mul(chunk, kb.i32(kVector)), kb.i32(j));
    Value col = kb.add(kb.mul(colTile, kb.i32(kQuantizeTileCols)), colInTile);
    kb.ifThen(isRow0, [&] {
      kb.store(scale.multiplier,
               kb.bytePtr(multipliers, kb.mul(colInTile, kb.i32(4))));
    });
    kb.ifThen(kb.andi(isRow0, kb.ult(col, kb.i32(p.cols))), [&] {
      kb.store(scale.stored, kb.globalElementPtr(columnwiseScale, col, 4));
    });
  }
  gpu::BarrierOp::create(b);

  // Pass 2: the cast of every row tile (read again), untransposed with the
  // per-column multipliers, or transposed: each transposed row is a column.
  forEachRowTile({}, [&](ValueRange) {
    SmallVector<Value> values = loadTile();
    if (!p.needsTranspose()) {
      columnBlockMultipliers = multipliers;
      quantizeOutput(values, OutputKind::ColumnwiseUntransposed, std::nullopt);
      return SmallVector<Value>();
    }
    // The previous tile's transposed reads are done before it is rewritten.
    gpu::BarrierOp::create(b);
    storeTileToShared(values);
    gpu::BarrierOp::create(b);
    OutputTile shape;
    shape.transposed = true;
    rowMultipliers.clear();
    for (int64_t s = 0; s < kSegments; ++s) {
      Value column = kb.add(kb.mul(rowInTile, kb.i32(4)),
                            kb.i32(shape.rowOffset(s)));
      rowMultipliers.push_back(
          kb.load(f32(), kb.bytePtr(multipliers, kb.mul(column, kb.i32(4)))));
    }
    quantizeOutput(loadTransposedSegments(), OutputKind::ColumnwiseTransposed,
                   std::nullopt);
    return SmallVector<Value>();
  });
}

gpu::GPUFuncOp mlir::fp8::buildQuantizeKernel(OpBuilder &builder, Location loc,
                                              gpu::GPUModuleOp module,
                                              StringRef name,
                                              const QuantizeProblem &p) {
  int64_t numPointers = 2; // x and amax
  if (!p.isAmaxOnly)
    numPointers = 1 + (p.scaleSource != QuantizeScaleSource::PerBlock) +
                  2 * p.rowwise + 2 * p.columnwise + (p.historyLength > 0);
  SmallVector<Type> trailingArgs;
  if (p.dynamicRows)
    trailingArgs.push_back(builder.getI32Type());
  gpu::GPUFuncOp func = createPointerKernel(
      builder, loc, module, name, numPointers, kQuantizeThreads, trailingArgs);
  if (!p.isAmaxOnly)
    func->setAttr(
        NVVM::NVVMDialect::getMinctasmAttrName(),
        // The columnwise row-granularity kernel (its columns' maxima, then
        // a cast of every row tile) spills under the 80-register cap.
        builder.getI32IntegerAttr(p.granularity == GranularityKind::Row &&
                                          p.columnwise
                                      ? std::min(p.minBlocksPerSM,
                                                 kWideMinBlocksPerSM)
                                      : p.minBlocksPerSM));
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&func.getBody().front());
  ImplicitLocOpBuilder b(loc, builder);
  QuantizeKernelEmitter(b, p).emit(func);
  return func;
}

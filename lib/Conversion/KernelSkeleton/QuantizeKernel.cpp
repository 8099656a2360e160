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
static constexpr int64_t kWarps = kQuantizeThreads / 32;
/// Bytes of the CTA reduction scratch (one u32 per warp).
static constexpr int64_t kReductionBytes = 4 * kWarps;
/// The MX 128x4 scale-factor atom (see GemmKernel.h kMXAtom*).
static constexpr int64_t kAtomRows = 128;
static constexpr int64_t kAtomBytes = 512;

//===----------------------------------------------------------------------===//
// The problem
//===----------------------------------------------------------------------===//

static LogicalResult checkShape(Operation *op, const QuantizeProblem &p) {
  if (p.cols % 16 != 0)
    return op->emitOpError()
           << "the quantization kernels take C (the last dimension) a "
              "multiple of 16 (16-byte vector loads and TMA-aligned FP8 rows), "
              "got "
           << p.cols;
  if (p.needsTranspose() && p.rows % 16 != 0)
    return op->emitOpError()
           << "a columnwise (transposed) output needs R a multiple of 16 "
              "(its rows are R bytes), got "
           << p.rows;
  return success();
}

LogicalResult mlir::fp8::checkKernelMatrix(Operation *op, ShapedType type,
                                           StringRef kernels) {
  if (type.getRank() != 2)
    return op->emitOpError() << kernels << " take 2-D inputs, got rank "
                             << type.getRank();
  if (!type.hasStaticShape())
    return op->emitOpError() << kernels << " are built per static shape, got "
                             << type;
  // Element offsets are computed in i32 where they index a row.
  if (type.getNumElements() >= (int64_t(1) << 31))
    return op->emitOpError() << "tensors of 2^31 or more elements are not "
                                "supported by "
                             << kernels;
  return success();
}

/// The problem's input: a static 2-D matrix (its extents and element type).
static FailureOr<QuantizeProblem> getInputProblem(Operation *op, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  if (failed(checkKernelMatrix(op, type, "the quantization kernels")))
    return failure();
  QuantizeProblem p;
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

FailureOr<QuantizeProblem> QuantizeProblem::get(QuantizeOp op,
                                                const ChipInfo &chip,
                                                bool scaleFromAmax,
                                                int64_t historyLength) {
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
  p.historyLength = historyLength;
  p.hardwareUe8m0 = chip.supportsBlockScaledMma;

  auto scaleType = [&](Value v) {
    return v ? cast<ShapedType>(v.getType()).getElementType() : Type();
  };
  for (Value s : {op.getRowwiseScaleInv(), op.getColumnwiseScaleInv()})
    if (s && !g.isMX() && !scaleType(s).isF32())
      return op.emitOpError() << "the quantization kernels write f32 "
                                 "scale_inv for non-MX granularities, got "
                              << scaleType(s);

  if (g.isTensor()) {
    if (op.getScale()) {
      p.rule = Rule::Tensor;
      p.scaleSource =
          scaleFromAmax ? QuantizeScaleSource::FromAmax : QuantizeScaleSource::Given;
      if (scaleFromAmax) {
        auto current = cast<CurrentScalingAttr>(op.getRecipe());
        p.rule = Rule::Current;
        p.epsilon = current.getEpsilon().convertToFloat();
        p.pow2 = current.getPow2();
      }
    } else {
      return op.emitOpError()
             << "a per-tensor quantization without a scale operand needs a "
                "grid-wide amax first: run fp8-decompose-quantize";
    }
  } else if (g.isRow()) {
    return op.emitOpError() << "row granularity has no quantization kernel yet";
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
  return llvm::formatv("{0}x{1}", p.blockRows, p.blockCols).str();
}

std::string mlir::fp8::getQuantizeKernelName(const QuantizeProblem &p) {
  if (p.isAmaxOnly)
    return llvm::formatv("fp8_amax_{0}_r{1}_c{2}", getKernelDTypeName(p.inputType),
                         p.rows, p.cols)
        .str();
  std::string name = llvm::formatv(
      "fp8_quantize_{0}_{1}_{2}_{3}_r{4}_c{5}", getRuleName(p.rule),
      getGranularityName(p), getKernelDTypeName(p.inputType),
      getKernelDTypeName(p.elementType), p.rows, p.cols);
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
  if (p.historyLength > 0)
    name += llvm::formatv("_hist{0}", p.historyLength).str();
  return name;
}

/// Row blocks of a tile in an untransposed columnwise output with per-block
/// scales (128x1 blocks: 1, MX 32x1 blocks: 4).
static int64_t getColumnBlocksPerTile(const QuantizeProblem &p) {
  return kQuantizeTileRows / p.blockCols;
}

int64_t mlir::fp8::getQuantizeSharedMemoryBytes(const QuantizeProblem &p) {
  int64_t tileBytes = 0;
  if (p.needsTranspose())
    tileBytes = kQuantizeTileRows * kQuantizeTileCols * 4;
  // Untransposed columnwise blocks: per-warp column maxima (u32), then the
  // blocks' multipliers (f32), per row block of the tile.
  if (p.hasUntransposedColumnwise() &&
      p.scaleSource == QuantizeScaleSource::PerBlock &&
      p.blockRows != kQuantizeTileRows)
    tileBytes = getColumnBlocksPerTile(p) * (kWarps + 1) * kQuantizeTileCols * 4;
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
    return {"tensor", {}, "f32", 4};
  case GranularityKind::Row:
    return {"row_major", {rows, 1}, "f32", 4};
  case GranularityKind::MX:
    // The 128x4 UE8M0 atoms the sm_100a block-scaled MMA reads:
    // [ceil(rows/128), ceil(cols/128), 512] bytes.
    return {"mx_atom_128x4_ue8m0",
            {P::ceilDiv(rows, kAtomRows), P::ceilDiv(cols, 128), kAtomBytes},
            "ue8m0",
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
            "f32",
            4};
  return {"row_major", {P::ceilDiv(rows, 128), P::ceilDiv(cols, 128)}, "f32", 4};
}

static ScaleTensorLayout getScaleLayout(const QuantizeProblem &p, int64_t rows,
                                        int64_t cols) {
  return getScaleTensorLayout(p.granularity, p.blockRows, rows, cols);
}

DictionaryAttr mlir::fp8::buildQuantizeKernelMetadata(
    MLIRContext *ctx, StringRef name, const ChipInfo &chip,
    const QuantizeProblem &p) {
  KernelMetadataBuilder m(ctx);
  auto operand = [&](StringRef opName, StringRef dtype, ArrayRef<int64_t> dims,
                     StringRef role, int64_t alignment) {
    m.addPointerOperand(opName, dtype, m.shape(dims), role, alignment);
  };
  // 16-byte vector loads of the input, 8-byte stores of the FP8 data.
  operand("x", getKernelDTypeName(p.inputType), {p.rows, p.cols}, "input", 16);
  if (p.isAmaxOnly) {
    operand("amax", "f32", {}, "output", 4);
  } else {
    if (p.scaleSource == QuantizeScaleSource::Given)
      operand("scale", "f32", {}, "input", 4);
    if (p.scaleSource == QuantizeScaleSource::FromAmax)
      operand("amax", "f32", {}, "input", 4);
    StringRef elem = getKernelDTypeName(p.elementType);
    if (p.rowwise) {
      ScaleTensorLayout s = getScaleLayout(p, p.rows, p.cols);
      operand("rowwise", elem, {p.rows, p.cols}, "output", 8);
      operand("rowwise_scale_inv", s.dtype, s.shape, "output", s.alignment);
    }
    if (p.columnwise) {
      ScaleTensorLayout s = getScaleLayout(p, p.cols, p.rows);
      SmallVector<int64_t> shape = {p.cols, p.rows};
      if (!p.columnwiseTransposed)
        shape = {p.rows, p.cols};
      operand("columnwise", elem, shape, "output", 8);
      operand("columnwise_scale_inv", s.dtype, s.shape, "output",
              s.alignment);
    }
    if (p.historyLength > 0)
      operand("amax_history", "f32", {p.historyLength}, "output", 4);
  }

  SmallVector<std::pair<StringRef, Attribute>> info = {
      {"rows", m.num(p.rows)},
      {"cols", m.num(p.cols)},
      {"input_dtype", m.str(getKernelDTypeName(p.inputType))}};
  if (p.isAmaxOnly) {
    info.push_back({"amax", m.str("max |x| (NaN-propagating) is max-ed into "
                                  "amax[0] with atomics: pass it zeroed")});
  } else {
    info.push_back({"dtype", m.str(getKernelDTypeName(p.elementType))});
    info.push_back({"rule", m.str(getRuleName(p.rule))});
    info.push_back({"granularity", m.str(getGranularityName(p))});
    if (p.rowwise)
      info.push_back({"rowwise_scale_layout",
                      m.str(getScaleLayout(p, p.rows, p.cols).name)});
    if (p.columnwise) {
      info.push_back({"columnwise_scale_layout",
                      m.str(getScaleLayout(p, p.cols, p.rows).name)});
      info.push_back({"columnwise_layout",
                      m.str(p.columnwiseTransposed ? "transposed"
                                                   : "untransposed")});
    }
    if (p.rule == QuantizeProblem::Rule::Current) {
      info.push_back({"epsilon", m.f32(p.epsilon)});
      info.push_back({"pow2", m.flag(p.pow2)});
    }
    if (p.rule == QuantizeProblem::Rule::BlockwisePow2 ||
        p.rule == QuantizeProblem::Rule::BlockwiseF32)
      info.push_back({"amax_clamp", m.f32(p.amaxClamp)});
    if (p.historyLength > 0)
      info.push_back({"amax_history", m.str("slot 0 becomes max(slot 0, "
                                            "amax(x)), NaN sticky, in place")});
  }
  return m.finish(name, chip, p.isAmaxOnly ? "amax" : "quantize",
                  kQuantizeThreads, getQuantizeSharedMemoryBytes(p),
                  m.tilesGrid(kQuantizeTileRows, kQuantizeTileCols, "x"),
                  "quantize", m.dict(info));
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

namespace {
/// A block's scale: the quantizer's multiplier and what is stored (f32
/// scale_inv, or the UE8M0 code as i8).
struct BlockScale {
  Value multiplier;
  Value stored;
};

class QuantizeKernelEmitter {
public:
  QuantizeKernelEmitter(ImplicitLocOpBuilder &b, const QuantizeProblem &p)
      : b(b), kb(b), p(p) {}

  void emit(gpu::GPUFuncOp func);

private:
  ImplicitLocOpBuilder &b;
  KernelBuilder kb;
  const QuantizeProblem &p;

  // Parameters.
  Value x, scaleOrAmax, rowwise, rowwiseScale, columnwise, columnwiseScale,
      amaxOut;
  // Thread geometry (i32).
  Value tid, chunk, rowInTile, colTile, rowTile;

  Type i32() { return b.getI32Type(); }
  Type f32() { return b.getF32Type(); }
  Value bits(Value f) { return arith::BitcastOp::create(b, i32(), f); }
  Value fromBits(Value i) { return arith::BitcastOp::create(b, f32(), i); }
  Value absBits(Value f) { return kb.absF32Bits(f); }
  Value umax(Value x, Value y) { return arith::MaxUIOp::create(b, x, y); }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b, c, t, f);
  }
  Value cmpi(arith::CmpIPredicate pred, Value x, Value y) {
    return arith::CmpIOp::create(b, pred, x, y);
  }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, x, y); }
  Value shl(Value x, Value y) { return arith::ShLIOp::create(b, x, y); }
  Value shr(Value x, Value y) { return arith::ShRUIOp::create(b, x, y); }
  Value divf(Value x, Value y) { return arith::DivFOp::create(b, x, y); }

  /// Butterfly maximum over the lanes whose index differs in `offsets`.
  Value shuffleMax(Value v, ArrayRef<int64_t> offsets);
  /// Maximum of `v` over the CTA (every thread gets it).
  Value ctaMax(Value v);

  SmallVector<Value> loadTile();
  SmallVector<Value> transposeTile(ArrayRef<Value> values);
  BlockScale computeScale(Value amaxBits);
  BlockScale tensorScale();
  Value ue8m0RoundUp(Value y);
  Value ue8m0Ocp(Value amax);
  /// Quantizes and stores one output from `values` (in the thread layout);
  /// `transposed` selects the columnwise output.
  void quantizeAndStore(ArrayRef<Value> values, bool transposed,
                        const std::optional<BlockScale> &shared);
  /// Quantizes the columnwise output from `values` (in the thread layout)
  /// and stores it untransposed, [R, C] like the input.
  void quantizeColumnwiseUntransposed(ArrayRef<Value> values,
                                      const std::optional<BlockScale> &shared);
  /// Per-block scales of an untransposed columnwise output: the thread's
  /// multipliers, element blk * 8 + j for column chunk * 8 + j of the
  /// tile's row block blk; the scale_inv are stored on the way.
  SmallVector<Value> computeColumnBlockMultipliers(ArrayRef<Value> values);
  /// The 8 FP8 codes of `scaled` (= `inputs` * `multipliers`, one for all
  /// or one per element) in memory order.
  Value pack8(ArrayRef<Value> inputs, ArrayRef<Value> multipliers,
              ArrayRef<Value> scaled);
};
} // namespace

Value QuantizeKernelEmitter::shuffleMax(Value v, ArrayRef<int64_t> offsets) {
  for (int64_t offset : offsets) {
    auto shuffle = gpu::ShuffleOp::create(b, v, static_cast<int32_t>(offset),
                                          /*width=*/32, gpu::ShuffleMode::XOR);
    v = umax(v, shuffle.getShuffleResult());
  }
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

SmallVector<Value> QuantizeKernelEmitter::loadTile() {
  int64_t elementBytes = p.inputType.getIntOrFloatBitWidth() / 8;
  bool guarded = p.rows % kQuantizeTileRows != 0 ||
                 p.cols % kQuantizeTileCols != 0;
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
        if (!p.inputType.isF32())
          v = arith::ExtFOp::create(b, f32Vector, v);
        parts.push_back(v);
      }
      return parts;
    };
    SmallVector<Value> parts;
    if (guarded) {
      Value valid = kb.andi(kb.ult(row, kb.i32(p.rows)), colValid);
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

SmallVector<Value> QuantizeKernelEmitter::transposeTile(ArrayRef<Value> values) {
  // f32 tile, 128 floats a row; the column's 4-float groups are XOR-swizzled
  // by bits 3..5 of the row, so that the transposed reads (16 lanes reading
  // rows 8 apart) spread over the banks. Writes stay 16-byte vectors.
  Value smem = kb.dynamicSharedMemory();
  auto swizzled = [&](Value row, Value col) {
    Value swz = kb.mul(kb.andi(shr(row, kb.i32(3)), kb.i32(7)), kb.i32(4));
    Value phys = arith::XOrIOp::create(b, col, swz);
    return kb.add(kb.mul(row, kb.i32(kQuantizeTileCols)), phys);
  };
  auto vec4 = VectorType::get({4}, f32());
  for (int64_t i = 0; i < kRowsPerThread; ++i) {
    Value row = kb.add(rowInTile, kb.i32(kRowStep * i));
    for (int64_t h = 0; h < kVector / 4; ++h) {
      Value col = kb.add(kb.mul(chunk, kb.i32(kVector)), kb.i32(4 * h));
      Value v = LLVM::PoisonOp::create(b, vec4);
      for (int64_t e = 0; e < 4; ++e)
        v = LLVM::InsertElementOp::create(b, v, values[i * kVector + 4 * h + e],
                                          kb.i32(e));
      Value ptr = kb.bytePtr(smem, kb.mul(swizzled(row, col), kb.i32(4)));
      LLVM::StoreOp::create(b, v, ptr, /*alignment=*/16);
    }
  }
  gpu::BarrierOp::create(b);
  SmallVector<Value> transposed;
  for (int64_t i = 0; i < kRowsPerThread; ++i) {
    // Row i of the transposed tile is column rowInTile + 16 i of the input.
    Value col = kb.add(rowInTile, kb.i32(kRowStep * i));
    for (int64_t j = 0; j < kVector; ++j) {
      Value row = kb.add(kb.mul(chunk, kb.i32(kVector)), kb.i32(j));
      Value ptr = kb.bytePtr(smem, kb.mul(swizzled(row, col), kb.i32(4)));
      transposed.push_back(kb.load(f32(), ptr));
    }
  }
  return transposed;
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
/// amax has the (sign-free) bits `amaxBits`.
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
    Value biased = kb.sub(kb.i32(254), code);
    Value multBits = select(kb.eq(biased, kb.i32(0)),
                            kb.i32(kF32TwoPowMinus127),
                            shl(biased, kb.i32(23)));
    multBits = select(kb.eq(code, kb.i32(kUe8m0NaN)), kb.i32(kF32QuietNaN),
                      multBits);
    return BlockScale{fromBits(multBits),
                      arith::TruncIOp::create(b, b.getI8Type(), code)};
  };

  Value amax = fromBits(amaxBits);
  switch (p.rule) {
  case Rule::Tensor:
    llvm_unreachable("per-tensor scales come from tensorScale()");
  case Rule::Current:
    return currentRule(amax, p.epsilon, p.pow2);
  case Rule::BlockwisePow2:
    return currentRule(clamp(amax), 0.f, /*pow2=*/true);
  case Rule::BlockwiseF32: {
    Value clamped = clamp(amax);
    Value cBits = bits(clamped);
    Value scaleInv = divf(clamped, kb.f32(num::maxFinite(num::Format::E4M3)));
    Value usable =
        kb.andi(kb.andi(cmpi(arith::CmpIPredicate::ne, cBits, kb.i32(0)),
                        kb.ult(cBits, kb.i32(kF32Inf))),
                cmpi(arith::CmpIPredicate::ne, bits(scaleInv), kb.i32(0)));
    Value scale = emitFiniteOrFltMax(b, divf(one, scaleInv));
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
  KernelBuilder kb(b);
  num::Format format = isa<Float8E5M2Type>(elementType) ? num::Format::E5M2
                                                        : num::Format::E4M3;
  if (epsilon != 0.f || amaxMayBeNegative) // amax < epsilon -> epsilon
    amax = arith::SelectOp::create(
        b,
        arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, amax,
                              kb.f32(epsilon)),
        kb.f32(epsilon), amax);
  // Finite and nonzero (of either sign).
  Value absBits = kb.absF32Bits(amax);
  Value usable =
      kb.andi(arith::CmpIOp::create(b, arith::CmpIPredicate::ne, absBits,
                                    kb.i32(0)),
              kb.ult(absBits, kb.i32(kF32Inf)));
  Value one = kb.f32(1.f);
  Value scale = arith::SelectOp::create(
      b, usable,
      emitFiniteOrFltMax(
          b, arith::DivFOp::create(b, kb.f32(num::maxFinite(format)), amax)),
      one);
  if (pow2)
    scale = arith::BitcastOp::create(
        b, b.getF32Type(),
        kb.andi(arith::BitcastOp::create(b, b.getI32Type(), scale),
                kb.i32(kF32SignAndExponentMask)));
  return {scale, arith::DivFOp::create(b, one, scale)};
}

BlockScale QuantizeKernelEmitter::tensorScale() {
  Value value = kb.load(f32(), scaleOrAmax);
  if (p.scaleSource == QuantizeScaleSource::FromAmax)
    return computeScale(absBits(value));
  return BlockScale{value, divf(kb.f32(1.f), value)};
}

Value QuantizeKernelEmitter::pack8(ArrayRef<Value> inputs,
                                   ArrayRef<Value> multipliers,
                                   ArrayRef<Value> scaled) {
  // cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b puts a in d[15:8] and b in
  // d[7:0]: element 2k + 1 goes in `a` so that bytes stay in memory order.
  Value packed = kb.i64(0);
  for (int64_t k = 0; k < kVector / 2; ++k) {
    Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
        b, b.getI16Type(), scaled[2 * k + 1], scaled[2 * k],
        NVVM::FPRoundingMode::RN, NVVM::SaturationMode::SATFINITE,
        /*relu=*/false, p.elementType);
    Value wide = arith::ExtUIOp::create(b, b.getI64Type(), pair);
    packed = ori(packed, arith::ShLIOp::create(b, wide, kb.i64(16 * k)));
  }
  // The GPU's f32 multiply returns the canonical (positive) NaN, while the
  // reference's host product keeps the NaN operand's sign (encodeSatFinite:
  // sign | NaN code): x * scale is x for a NaN x and a finite scale, and the
  // (positive) NaN multiplier of a NaN MX block otherwise. Set the sign bit
  // of the bytes whose input is a negative NaN (bits above 0xFF800000) when
  // the multiplier is not NaN.
  for (int64_t j = 0; j < kVector; ++j) {
    Value multiplier = multipliers[multipliers.size() == 1 ? 0 : j];
    Value multiplierIsNumber =
        cmpi(arith::CmpIPredicate::ule, absBits(multiplier), kb.i32(kF32Inf));
    Value negativeNaN = kb.andi(
        multiplierIsNumber, cmpi(arith::CmpIPredicate::ugt, bits(inputs[j]),
                                 kb.i32(kF32SignAndExponentMask)));
    packed = ori(packed, select(negativeNaN, kb.i64(int64_t(0x80) << (8 * j)),
                                kb.i64(0)));
  }
  return packed;
}

void QuantizeKernelEmitter::quantizeAndStore(
    ArrayRef<Value> values, bool transposed,
    const std::optional<BlockScale> &shared) {
  // The stored matrix: rowwise [R, C] from tile (rowTile, colTile);
  // columnwise [C, R] from tile (colTile, rowTile).
  int64_t outRows = transposed ? p.cols : p.rows;
  int64_t outCols = transposed ? p.rows : p.cols;
  Value outRowTile = transposed ? colTile : rowTile;
  Value outColTile = transposed ? rowTile : colTile;
  int64_t outColTiles = QuantizeProblem::ceilDiv(outCols, kQuantizeTileCols);
  Value data = transposed ? columnwise : rowwise;
  Value scales = transposed ? columnwiseScale : rowwiseScale;
  bool guarded = p.rows % kQuantizeTileRows != 0 ||
                 p.cols % kQuantizeTileCols != 0;
  Value col = kb.add(kb.mul(outColTile, kb.i32(kQuantizeTileCols)),
                     kb.mul(chunk, kb.i32(kVector)));
  Value colValid = kb.ult(col, kb.i32(outCols));

  for (int64_t i = 0; i < kRowsPerThread; ++i) {
    ArrayRef<Value> row8 = values.slice(i * kVector, kVector);
    Value rowInOut = kb.add(rowInTile, kb.i32(kRowStep * i));
    Value row = kb.add(kb.mul(outRowTile, kb.i32(kQuantizeTileRows)), rowInOut);
    Value rowValid = kb.ult(row, kb.i32(outRows));

    BlockScale scale;
    if (shared) {
      scale = *shared;
    } else {
      Value m = absBits(row8[0]);
      for (Value v : row8.drop_front())
        m = umax(m, absBits(v));
      // 1x128: the 16 lanes of a row; 1x32: 4 lanes.
      m = p.blockCols == 128 ? shuffleMax(m, {8, 4, 2, 1})
                             : shuffleMax(m, {2, 1});
      scale = computeScale(m);
      if (p.isMX()) {
        // Byte (r % 32) * 16 + (r % 128) / 32 * 4 + kb % 4 of atom
        // (r / 128, kb / 4), atoms K-fastest; padding rows/blocks of an
        // atom are written too (they lie inside the scale tensor).
        Value atom = kb.add(kb.mul(outRowTile, kb.i32(outColTiles)), outColTile);
        Value offset = kb.add(
            kb.add(kb.mul(atom, kb.i32(kAtomBytes)),
                   kb.mul(kb.remu(rowInOut, kb.i32(32)), kb.i32(16))),
            kb.add(kb.mul(kb.divu(rowInOut, kb.i32(32)), kb.i32(4)),
                   kb.divu(chunk, kb.i32(4))));
        kb.ifThen(kb.eq(kb.remu(chunk, kb.i32(4)), kb.i32(0)), [&] {
          kb.store(scale.stored, kb.bytePtr(scales, offset));
        });
      } else {
        // 1x128: MN-major [ceil(outCols/128), roundup(outRows, 4)].
        Value index = kb.add(
            kb.mul(outColTile, kb.i32(QuantizeProblem::roundUp(outRows, 4))),
            row);
        kb.ifThen(kb.andi(kb.eq(chunk, kb.i32(0)), rowValid), [&] {
          kb.store(scale.stored, kb.globalElementPtr(scales, index, 4));
        });
      }
    }

    SmallVector<Value> scaled;
    for (Value v : row8)
      scaled.push_back(arith::MulFOp::create(b, v, scale.multiplier));
    Value packed = pack8(row8, scale.multiplier, scaled);
    Value index = arith::AddIOp::create(
        b,
        arith::MulIOp::create(b, arith::ExtUIOp::create(b, b.getI64Type(), row),
                              kb.i64(outCols)),
        arith::ExtUIOp::create(b, b.getI64Type(), col));
    auto store = [&] {
      LLVM::StoreOp::create(b, packed, kb.bytePtr(data, index),
                            /*alignment=*/8);
    };
    if (guarded)
      kb.ifThen(kb.andi(rowValid, colValid), store);
    else
      store();
  }
}

SmallVector<Value>
QuantizeKernelEmitter::computeColumnBlockMultipliers(ArrayRef<Value> values) {
  int64_t blocks = getColumnBlocksPerTile(p);
  int64_t iPerBlock = kRowsPerThread / blocks;
  Value smem = kb.dynamicSharedMemory();
  int64_t partialBytes = blocks * kWarps * kQuantizeTileCols * 4;
  Value lane = kb.remu(tid, kb.i32(kWarpThreads));
  Value warp = kb.divu(tid, kb.i32(kWarpThreads));
  auto i32x8 = VectorType::get({kVector}, i32());
  auto f32x8 = VectorType::get({kVector}, f32());

  // 1. Each warp's column maxima of its two rows per i (lanes l, l ^ 16
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
  gpu::BarrierOp::create(b);

  // 2. One thread per (block, column): the block's amax over the warps, its
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
      kb.store(scale.multiplier, kb.bytePtr(multipliers, kb.mul(pair, kb.i32(4))));
      // The columnwise scales are those of x^T, whichever way its data is
      // stored: x's column colTile * 128 + c is x^T's row.
      Value col = kb.add(kb.mul(colTile, kb.i32(kQuantizeTileCols)), c);
      if (p.isMX()) {
        // Byte (c % 32) * 16 + (c / 32) * 4 + blk of atom (colTile, rowTile).
        Value atom = kb.add(kb.mul(colTile, kb.i32(p.rowTiles())), rowTile);
        Value offset = kb.add(
            kb.add(kb.mul(atom, kb.i32(kAtomBytes)),
                   kb.mul(kb.remu(c, kb.i32(32)), kb.i32(16))),
            kb.add(kb.mul(kb.divu(c, kb.i32(32)), kb.i32(4)), blk));
        kb.store(scale.stored, kb.bytePtr(columnwiseScale, offset));
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

  // 3. The thread's multipliers.
  SmallVector<Value> result;
  for (int64_t blk = 0; blk < blocks; ++blk) {
    Value offset = kb.mul(
        kb.add(kb.i32(blk * kQuantizeTileCols), kb.mul(chunk, kb.i32(kVector))),
        kb.i32(4));
    Value v = LLVM::LoadOp::create(b, f32x8, kb.bytePtr(multipliers, offset),
                                   /*alignment=*/16);
    for (int64_t j = 0; j < kVector; ++j)
      result.push_back(LLVM::ExtractElementOp::create(b, v, kb.i32(j)));
  }
  return result;
}

void QuantizeKernelEmitter::quantizeColumnwiseUntransposed(
    ArrayRef<Value> values, const std::optional<BlockScale> &shared) {
  // Per-tensor and 128x128 scales: the rowwise bytes, in another buffer.
  SmallVector<Value> multipliers;
  int64_t iPerBlock = kRowsPerThread;
  if (shared) {
    multipliers.push_back(shared->multiplier);
  } else {
    multipliers = computeColumnBlockMultipliers(values);
    iPerBlock = kRowsPerThread / getColumnBlocksPerTile(p);
  }
  bool guarded = p.rows % kQuantizeTileRows != 0 ||
                 p.cols % kQuantizeTileCols != 0;
  Value col = kb.add(kb.mul(colTile, kb.i32(kQuantizeTileCols)),
                     kb.mul(chunk, kb.i32(kVector)));
  Value colValid = kb.ult(col, kb.i32(p.cols));
  for (int64_t i = 0; i < kRowsPerThread; ++i) {
    ArrayRef<Value> row8 = values.slice(i * kVector, kVector);
    ArrayRef<Value> rowMultipliers =
        shared ? ArrayRef<Value>(multipliers)
               : ArrayRef<Value>(multipliers).slice(i / iPerBlock * kVector,
                                                    kVector);
    SmallVector<Value> scaled;
    for (int64_t j = 0; j < kVector; ++j)
      scaled.push_back(arith::MulFOp::create(
          b, row8[j], rowMultipliers[rowMultipliers.size() == 1 ? 0 : j]));
    Value packed = pack8(row8, rowMultipliers, scaled);
    Value row = kb.add(kb.mul(rowTile, kb.i32(kQuantizeTileRows)),
                       kb.add(rowInTile, kb.i32(kRowStep * i)));
    Value index = arith::AddIOp::create(
        b,
        arith::MulIOp::create(b, arith::ExtUIOp::create(b, b.getI64Type(), row),
                              kb.i64(p.cols)),
        arith::ExtUIOp::create(b, b.getI64Type(), col));
    auto store = [&] {
      LLVM::StoreOp::create(b, packed, kb.bytePtr(columnwise, index),
                            /*alignment=*/8);
    };
    if (guarded)
      kb.ifThen(kb.andi(kb.ult(row, kb.i32(p.rows)), colValid), store);
    else
      store();
  }
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

  tid = kb.threadIdX();
  chunk = kb.remu(tid, kb.i32(kChunksPerRow));
  rowInTile = kb.divu(tid, kb.i32(kChunksPerRow));
  colTile = kb.blockIdX();
  rowTile = arith::IndexCastUIOp::create(
      b, i32(), gpu::BlockIdOp::create(b, gpu::Dimension::y));

  SmallVector<Value> values = loadTile();
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
  if (p.isAmaxOnly) {
    gpu::ReturnOp::create(b);
    return;
  }

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
                       kb.add(kb.mul(colTile, kb.i32(p.rowTiles())), rowTile),
                       4));
      });
    }
  }

  if (p.rowwise)
    quantizeAndStore(values, /*transposed=*/false, shared);
  if (p.needsTranspose())
    quantizeAndStore(transposeTile(values), /*transposed=*/true, shared);
  if (p.hasUntransposedColumnwise())
    quantizeColumnwiseUntransposed(values, shared);
  gpu::ReturnOp::create(b);
}

gpu::GPUFuncOp mlir::fp8::buildQuantizeKernel(OpBuilder &builder, Location loc,
                                              gpu::GPUModuleOp module,
                                              StringRef name,
                                              const QuantizeProblem &p) {
  int64_t numPointers = 2; // x and amax
  if (!p.isAmaxOnly)
    numPointers = 1 + (p.scaleSource != QuantizeScaleSource::PerBlock) +
                  2 * p.rowwise + 2 * p.columnwise + (p.historyLength > 0);
  gpu::GPUFuncOp func = createPointerKernel(builder, loc, module, name,
                                            numPointers, kQuantizeThreads);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&func.getBody().front());
  ImplicitLocOpBuilder b(loc, builder);
  QuantizeKernelEmitter(b, p).emit(func);
  return func;
}

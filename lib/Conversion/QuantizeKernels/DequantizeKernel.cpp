//===- DequantizeKernel.cpp - fp8.dequantize as a GPU kernel --------------===//
//
// numerics::dequantize, then the output rounding of the op: decode (exact:
// every E4M3/E5M2 value is an f16, and `cvt.rn.f16x2.e4m3x2` is exact), an
// RN f32 multiply without flush-to-zero, and an RNE conversion to bf16/f16.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/QuantizeKernels/DequantizeKernel.h"
#include "FP8/Conversion/KernelSkeleton/GemmKernel.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"
#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"
#include "FP8/Conversion/QuantizeKernels/QuantizeKernel.h"
#include "QuantizeKernelsCommon.h"
#include "TileWalk.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fp8;
// The quantization kernels' thread layout and bit patterns.
using namespace mlir::fp8::detail;

FailureOr<DequantizeProblem> DequantizeProblem::get(DequantizeOp op) {
  auto type = op.getInput().getType();
  if (failed(checkKernelMatrix(op, type, "the dequantization kernels")))
    return failure();
  bool dynamicRows = type.isDynamicDim(0);
  DequantizeProblem p;
  p.dynamicRows = dynamicRows;
  p.rows = type.getDimSize(0);
  p.cols = type.getDimSize(1);
  p.elementType = type.getElementType();
  p.outputType = op.getResult().getType().getElementType();
  GranularityAttr g = op.getGranularity();
  p.granularity = g.getKind();
  p.blockRows = g.getTile().rows;
  p.blockCols = g.getTile().cols;
  if (p.cols % kVector != 0)
    return op.emitOpError() << "the dequantization kernels take C (the last "
                               "dimension) a multiple of 8 (8-byte loads of "
                               "the FP8 rows), got "
                            << p.cols << ": pad C to a multiple of 8";
  if (g.isTile()) {
    if (!op.getScaleInv().getType().getElementType().isF32())
      return op.emitOpError()
             << "the dequantization kernels read f32 scale_inv for tile "
                "granularities (what the quantization kernels write), got "
             << op.getScaleInv().getType().getElementType();
    if (!((p.blockRows == 1 || p.blockRows == 128) && p.blockCols == 128))
      return op.emitOpError() << "the dequantization kernels take 1x128 and "
                                 "128x128 tiles, got "
                              << g.describe();
  }
  if (g.isMX() && p.blockCols != 32)
    return op.emitOpError() << "the dequantization kernels take MX 1x32 "
                               "blocks, got "
                            << g.describe();
  return p;
}

static std::string getGranularityName(const DequantizeProblem &p) {
  switch (p.granularity) {
  case GranularityKind::Tensor:
    return "tensor";
  case GranularityKind::Row:
    return "row";
  case GranularityKind::Tile:
  case GranularityKind::MX:
    break;
  }
  return llvm::formatv("{0}{1}x{2}", p.granularity == GranularityKind::MX
                                         ? "mx"
                                         : "",
                       p.blockRows, p.blockCols);
}

std::string mlir::fp8::getDequantizeKernelName(const DequantizeProblem &p) {
  std::string rows =
      p.dynamicRows ? std::string("dyn") : std::to_string(p.rows);
  return llvm::formatv("fp8_dequantize_{0}_{1}_{2}_r{3}_c{4}",
                       getGranularityName(p), getKernelDTypeName(p.elementType),
                       getKernelDTypeName(p.outputType), rows, p.cols);
}

md::KernelMetadata
mlir::fp8::buildDequantizeKernelMetadata(StringRef name, const ChipInfo &chip,
                                         const DequantizeProblem &p) {
  md::KernelMetadata metadata =
      makeTileKernelMetadata(name, chip, md::KernelKind::Dequantize);
  // With a run-time R only the layout's name, dtype and alignment are used.
  ScaleTensorLayout scales = getScaleTensorLayout(
      p.granularity, p.blockRows, p.dynamicRows ? kQuantizeTileRows : p.rows,
      p.cols);
  std::vector<md::Expr> matrix =
      getMatrixExtents(p.dynamicRows, p.rows, p.cols);
  std::vector<md::Expr> scaleShape =
      p.dynamicRows ? getRunTimeRowsScaleShape(p.granularity, p.blockRows,
                                               p.cols, /*columnwise=*/false)
                    : getConstantShape(scales.shape);
  // 8-byte loads of the FP8 rows, 16-byte stores of the output.
  addPointerOperand(metadata, "x", getKernelDType(p.elementType), matrix,
                    md::OperandRole::Input, 8);
  addPointerOperand(metadata, "scale_inv", scales.dtype, scaleShape,
                    md::OperandRole::Input, scales.alignment);
  addPointerOperand(metadata, "y", getKernelDType(p.outputType), matrix,
                    md::OperandRole::Output, 16);
  addRowsParam(metadata, p.dynamicRows);
  md::DequantizeInfo info;
  info.rows = matrix[0];
  info.cols = p.cols;
  info.dtype = getKernelDType(p.elementType);
  info.outDtype = getKernelDType(p.outputType);
  info.granularity = getGranularityName(p);
  info.scaleLayout = scales.name.str();
  metadata.dequantize = info;
  return metadata;
}

namespace {
class DequantizeKernelEmitter {
public:
  DequantizeKernelEmitter(ImplicitLocOpBuilder &b, const DequantizeProblem &p)
      : b(b), kb(b), p(p) {}

  void emit(Block &entry);

private:
  ImplicitLocOpBuilder &b;
  KernelBuilder kb;
  const DequantizeProblem &p;
  Value x, scaleInv, y;
  /// R (i32): the constant, or the kernel's `r` parameter.
  Value numRows;
  Value chunk, rowInTile, colTile, rowTile;

  /// scale_inv of the block holding row `row` (i), tile row `rowInOut`,
  /// for the thread's columns.
  Value loadBlockScale(Value row, Value rowInOut);
  /// The 8 f32 values of the 8 FP8 codes in `codes` (i64, memory order).
  SmallVector<Value> decode8(Value codes);
  void storeRow(ArrayRef<Value> values, Value index);
};
} // namespace

Value DequantizeKernelEmitter::loadBlockScale(Value row, Value rowInOut) {
  switch (p.granularity) {
  case GranularityKind::Tensor:
    return kb.loadF32(scaleInv, kb.i32(0));
  case GranularityKind::Row:
    return kb.loadF32(scaleInv, row);
  case GranularityKind::Tile:
    if (p.blockRows == 1) {
      // MN-major [ceil(C/128), roundup(R, 4)]; the tile's columns are one
      // 128-column block.
      Value paddedRows;
      if (p.dynamicRows) {
        Value bumped =
            kb.add(numRows, kb.i32(kMNMajorScaleAlignment - 1));
        paddedRows = kb.andi(bumped, kb.i32(-kMNMajorScaleAlignment));
      } else {
        paddedRows = kb.i32(llvm::alignTo(p.rows, kMNMajorScaleAlignment));
      }
      Value blockStart = kb.mul(colTile, paddedRows);
      return kb.loadF32(scaleInv, kb.add(blockStart, row));
    }
    // [ceil(R/128), ceil(C/128)]: the tile is one block.
    return kb.loadF32(
        scaleInv,
        kb.add(kb.mul(rowTile,
                      kb.i32(llvm::divideCeil(p.cols, kBlockwiseScaleBlock))),
               colTile));
  case GranularityKind::MX:
    break;
  }
  // Byte (r % 32) * 16 + (r % 128) / 32 * 4 + kb % 4 of the 128x4 atom
  // (rowTile, colTile), kb % 4 = chunk / 4.
  Value atom = kb.add(
      kb.mul(rowTile, kb.i32(llvm::divideCeil(p.cols, kMXAtomK))), colTile);
  Value offset = kb.add(
      kb.add(kb.mul(atom, kb.i32(kMXAtomBytes)),
             kb.mul(kb.remu(rowInOut, kb.i32(32)), kb.i32(16))),
      kb.add(kb.mul(kb.divu(rowInOut, kb.i32(32)), kb.i32(4)),
             kb.divu(chunk, kb.i32(4))));
  Value code = arith::ExtUIOp::create(
      b, b.getI32Type(),
      kb.load(b.getI8Type(), kb.bytePtr(scaleInv, offset)));
  // decodeUe8m0: 2^(e - 127) is the f32 with biased exponent e.
  Value scaleBits = arith::SelectOp::create(
      b, kb.eq(code, kb.i32(0)), kb.i32(kF32TwoPowMinus127),
      arith::ShLIOp::create(b, code, kb.i32(23)));
  scaleBits = arith::SelectOp::create(b, kb.eq(code, kb.i32(kUe8m0NaN)),
                                      kb.i32(kF32QuietNaN), scaleBits);
  return arith::BitcastOp::create(b, b.getF32Type(), scaleBits);
}

SmallVector<Value> DequantizeKernelEmitter::decode8(Value codes) {
  // cvt.rn.f16x2.{e4m3x2,e5m2x2} d, a: a[7:0] to d[15:0], a[15:8] to
  // d[31:16], so a pair's elements stay in memory order.
  auto i8x2 = VectorType::get({2}, b.getI8Type());
  auto f16x2 = VectorType::get({2}, b.getF16Type());
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  SmallVector<Value> values;
  for (int64_t k = 0; k < kVector / 2; ++k) {
    Value pair = arith::TruncIOp::create(
        b, b.getI16Type(),
        arith::ShRUIOp::create(b, codes, kb.i64(16 * k)));
    Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
        b, f16x2, LLVM::BitcastOp::create(b, i8x2, pair), /*relu=*/false,
        p.elementType);
    Value wide = arith::ExtFOp::create(b, f32x2, halves);
    for (int64_t e = 0; e < 2; ++e)
      values.push_back(LLVM::ExtractElementOp::create(b, wide, kb.i32(e)));
  }
  return values;
}

void DequantizeKernelEmitter::storeRow(ArrayRef<Value> values, Value index) {
  // 16-byte stores: 8 bf16/f16, or 4 f32 twice.
  int64_t elementBytes = p.outputType.getIntOrFloatBitWidth() / 8;
  int64_t perStore = 16 / elementBytes;
  auto f32Vector = VectorType::get({perStore}, b.getF32Type());
  for (int64_t part = 0; part < kVector / perStore; ++part) {
    Value v = LLVM::PoisonOp::create(b, f32Vector);
    for (int64_t e = 0; e < perStore; ++e)
      v = LLVM::InsertElementOp::create(b, v, values[part * perStore + e],
                                        kb.i32(e));
    if (!p.outputType.isF32())
      // RNE (arith.truncf's default rounding), with subnormals.
      v = arith::TruncFOp::create(
          b, VectorType::get({perStore}, p.outputType), v);
    Value ptr = kb.globalElementPtr(
        y, arith::AddIOp::create(b, index, kb.i64(part * perStore)),
        elementBytes);
    LLVM::StoreOp::create(b, v, ptr, /*alignment=*/16);
  }
}

void DequantizeKernelEmitter::emit(Block &entry) {
  x = entry.getArgument(0);
  scaleInv = entry.getArgument(1);
  y = entry.getArgument(2);
  numRows = p.dynamicRows ? entry.getArgument(3) : kb.i32(p.rows);
  TileWalk walk(b, kb, p.rows, p.cols, p.dynamicRows);
  chunk = walk.chunk;
  rowInTile = walk.rowInTile;
  colTile = walk.colTile;
  rowTile = walk.rowTile;
  walk.forEachRow(b, kb, numRows, p.cols,
                  [&](Value row, Value rowInOut, Value index) {
                    Value codes = LLVM::LoadOp::create(
                        b, b.getI64Type(), kb.bytePtr(x, index),
                        /*alignment=*/8);
                    Value scale = loadBlockScale(row, rowInOut);
                    SmallVector<Value> values;
                    for (Value v : decode8(codes))
                      values.push_back(arith::MulFOp::create(b, v, scale));
                    storeRow(values, index);
                  });
  gpu::ReturnOp::create(b);
}

gpu::GPUFuncOp mlir::fp8::buildDequantizeKernel(OpBuilder &builder,
                                                Location loc,
                                                gpu::GPUModuleOp module,
                                                StringRef name,
                                                const DequantizeProblem &p) {
  return buildTileKernel(builder, loc, module, name, /*numPointers=*/3,
                         p.dynamicRows,
                         [&](ImplicitLocOpBuilder &b, Block &entry) {
                           DequantizeKernelEmitter(b, p).emit(entry);
                         });
}

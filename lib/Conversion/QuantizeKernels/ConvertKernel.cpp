//===- ConvertKernel.cpp - Element-type conversion as a GPU kernel --------===//
//
// y = x rounded to nearest even into bf16/f16, subnormals kept (what
// arith.truncf means without a rounding mode), in the quantization kernels'
// thread layout.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/QuantizeKernels/ConvertKernel.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"
#include "FP8/Conversion/QuantizeKernels/QuantizeKernel.h"
#include "QuantizeKernelsCommon.h"
#include "TileWalk.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fp8;
// The quantization kernels' thread layout.
using namespace mlir::fp8::detail;

bool ConvertProblem::matches(arith::TruncFOp op) {
  auto from = dyn_cast<RankedTensorType>(op.getIn().getType());
  auto to = dyn_cast<RankedTensorType>(op.getType());
  return from && to && from.getElementType().isF32() &&
         (to.getElementType().isBF16() || to.getElementType().isF16());
}

FailureOr<ConvertProblem> ConvertProblem::get(arith::TruncFOp op) {
  auto type = cast<RankedTensorType>(op.getIn().getType());
  if (failed(checkKernelMatrix(op, type, "the conversion kernels")))
    return failure();
  if (auto mode = op.getRoundingmodeAttr();
      mode && mode.getValue() != arith::RoundingMode::to_nearest_even)
    return op.emitOpError()
           << "the conversion kernels round to nearest even, got rounding "
              "mode '"
           << arith::stringifyRoundingMode(mode.getValue())
           << "': drop the rounding mode";
  ConvertProblem p;
  p.dynamicRows = type.isDynamicDim(0);
  p.rows = type.getDimSize(0);
  p.cols = type.getDimSize(1);
  p.inputType = type.getElementType();
  p.outputType = cast<RankedTensorType>(op.getType()).getElementType();
  if (p.cols % kVector != 0)
    return op.emitOpError() << "the conversion kernels take C (the last "
                               "dimension) a multiple of 8 (16-byte stores "
                               "of the converted rows), got "
                            << p.cols << ": pad C to a multiple of 8";
  return p;
}

std::string mlir::fp8::getConvertKernelName(const ConvertProblem &p) {
  // R and C as the quantization kernels name them (`rdyn`: a run-time R).
  std::string shape = llvm::formatv(
      "r{0}_c{1}", p.dynamicRows ? std::string("dyn") : std::to_string(p.rows),
      p.cols);
  return "fp8_convert_" + getKernelDTypeName(p.inputType).str() + "_" +
         getKernelDTypeName(p.outputType).str() + "_" + shape;
}

md::KernelMetadata
mlir::fp8::buildConvertKernelMetadata(StringRef name, const ChipInfo &chip,
                                      const ConvertProblem &p) {
  md::KernelMetadata metadata =
      makeTileKernelMetadata(name, chip, md::KernelKind::Convert);
  std::vector<md::Expr> matrix =
      getMatrixExtents(p.dynamicRows, p.rows, p.cols);
  md::ConvertInfo &info = metadata.convert.emplace();
  info.rows = matrix[0];
  info.cols = p.cols;
  info.inputDtype = getKernelDType(p.inputType);
  info.outDtype = getKernelDType(p.outputType);
  info.rounding = "to nearest even, subnormals kept";
  // 16-byte loads of x and stores of y.
  for (auto [operand, type, role] :
       {std::tuple("x", p.inputType, md::OperandRole::Input),
        std::tuple("y", p.outputType, md::OperandRole::Output)})
    addPointerOperand(metadata, operand, getKernelDType(type), matrix, role,
                      16);
  addRowsParam(metadata, p.dynamicRows);
  return metadata;
}

/// The kernel body: each thread converts 8 consecutive values of 8 rows.
static void emitConvert(ImplicitLocOpBuilder &b, Block &entry,
                        const ConvertProblem &p) {
  KernelBuilder kb(b);
  Value x = entry.getArgument(0);
  Value y = entry.getArgument(1);
  Value numRows = p.dynamicRows ? entry.getArgument(2) : kb.i32(p.rows);
  auto f32x4 = VectorType::get({kVector / 2}, b.getF32Type());
  auto f32x8 = VectorType::get({kVector}, b.getF32Type());
  auto outVector = VectorType::get({kVector}, p.outputType);
  int64_t outBytes = p.outputType.getIntOrFloatBitWidth() / 8;
  TileWalk walk(b, kb, p.rows, p.cols, p.dynamicRows);
  walk.forEachRow(b, kb, numRows, p.cols, [&](Value, Value, Value index) {
    // Two 16-byte loads of 4 f32 into one vector of 8.
    Value values = LLVM::PoisonOp::create(b, f32x8);
    for (int64_t half = 0; half < 2; ++half) {
      Value ptr = kb.globalElementPtr(
          x, arith::AddIOp::create(b, index, kb.i64(half * kVector / 2)), 4);
      Value part = LLVM::LoadOp::create(b, f32x4, ptr, /*alignment=*/16);
      for (int64_t e = 0; e < kVector / 2; ++e)
        values = LLVM::InsertElementOp::create(
            b, values, LLVM::ExtractElementOp::create(b, part, kb.i32(e)),
            kb.i32(half * kVector / 2 + e));
    }
    // RNE (arith.truncf's default rounding), with subnormals.
    Value converted = arith::TruncFOp::create(b, outVector, values);
    LLVM::StoreOp::create(b, converted,
                          kb.globalElementPtr(y, index, outBytes),
                          /*alignment=*/16);
  });
  gpu::ReturnOp::create(b);
}

gpu::GPUFuncOp mlir::fp8::buildConvertKernel(OpBuilder &builder, Location loc,
                                             gpu::GPUModuleOp module,
                                             StringRef name,
                                             const ConvertProblem &p) {
  return buildTileKernel(builder, loc, module, name, /*numPointers=*/2,
                         p.dynamicRows,
                         [&](ImplicitLocOpBuilder &b, Block &entry) {
                           emitConvert(b, entry, p);
                         });
}

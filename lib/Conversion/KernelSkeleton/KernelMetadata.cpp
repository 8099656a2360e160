//===- KernelMetadata.cpp - The metadata of a kernel ----------------------===//

#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"
#include "FP8/Target/SchemaWriter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::fp8;

md::DType mlir::fp8::getKernelDType(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return md::DType::E4M3;
  if (isa<Float8E5M2Type>(t))
    return md::DType::E5M2;
  if (isa<Float8E8M0FNUType>(t))
    return md::DType::UE8M0;
  if (t.isBF16())
    return md::DType::BF16;
  if (t.isF16())
    return md::DType::F16;
  if (t.isInteger(32))
    return md::DType::I32;
  return md::DType::F32;
}

StringRef mlir::fp8::getKernelDTypeName(Type t) {
  return md::stringify(getKernelDType(t));
}

std::vector<md::Expr> mlir::fp8::getConstantShape(ArrayRef<int64_t> extents) {
  std::vector<md::Expr> shape;
  for (int64_t extent : extents)
    shape.push_back(md::Expr::constant(extent));
  return shape;
}

md::KernelMetadata mlir::fp8::makeKernelMetadata(
    StringRef name, const ChipInfo &chip, std::optional<md::KernelKind> kind,
    int64_t threads, int64_t dynamicSharedMemoryBytes, md::Grid grid) {
  md::KernelMetadata metadata;
  metadata.name = name.str();
  metadata.entry = name.str();
  metadata.chip = chip.name.str();
  metadata.kind = kind;
  metadata.block = {threads, 1, 1};
  metadata.cluster = std::vector<int64_t>{1, 1, 1};
  metadata.dynamicSharedMemoryBytes = dynamicSharedMemoryBytes;
  metadata.grid = std::move(grid);
  metadata.tensorMaps.emplace();
  return metadata;
}

void mlir::fp8::addPointerOperand(md::KernelMetadata &metadata, StringRef name,
                                  md::DType dtype, std::vector<md::Expr> shape,
                                  md::OperandRole role, int64_t alignment) {
  md::Operand operand;
  operand.name = name.str();
  operand.dtype = dtype;
  operand.shape = std::move(shape);
  operand.role = role;
  operand.alignment = alignment;
  metadata.operands.push_back(std::move(operand));
  md::Param param;
  param.kind = md::ParamKind::Pointer;
  param.name = name.str();
  param.operand = name.str();
  metadata.params.push_back(std::move(param));
}

void mlir::fp8::addValueParam(md::KernelMetadata &metadata, StringRef name,
                              md::ParamKind kind, StringRef symbol,
                              int64_t multipleOf, StringRef reason) {
  md::Param param;
  param.kind = kind;
  param.name = name.str();
  param.value = md::Expr::symbol(symbol.str());
  if (multipleOf > 1) {
    param.multipleOf = multipleOf;
    param.reason = reason.str();
  }
  metadata.params.push_back(std::move(param));
}

md::Grid mlir::fp8::getTilesGrid(int64_t tileRows, int64_t tileCols,
                                 StringRef operand) {
  md::Grid grid;
  grid.kind = md::GridKind::Tiles;
  grid.tileM = tileRows;
  grid.tileN = tileCols;
  grid.operand = operand.str();
  return grid;
}

md::Grid mlir::fp8::getFixedGrid(ArrayRef<int64_t> dims) {
  md::Grid grid;
  grid.kind = md::GridKind::Fixed;
  grid.dims.assign(dims.begin(), dims.end());
  return grid;
}

//===----------------------------------------------------------------------===//
// The writer, generated from schema/kernel.schema.json
//===----------------------------------------------------------------------===//

#include "KernelMetadataWriter.inc"

DictionaryAttr
mlir::fp8::getKernelMetadataAttr(MLIRContext *ctx,
                                 const md::KernelMetadata &metadata) {
  Builder b(ctx);
  return writeKernelMetadata(b, metadata);
}

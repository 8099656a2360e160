//===- KernelModule.cpp - Kernels and their host launchers ----------------===//

#include "KernelModule.h"

#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fp8;

/// Name of the gpu.module holding every kernel of a module.
static constexpr llvm::StringLiteral kKernelModuleName = "fp8_kernels";
/// On a host launcher declaration: the kernel it launches.
static constexpr llvm::StringLiteral kKernelAttrName = "fp8.kernel";

gpu::GPUModuleOp mlir::fp8::getOrCreateKernelModule(ModuleOp module) {
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName))
    return existing;
  OpBuilder builder(module.getContext());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  builder.getUnitAttr());
  builder.setInsertionPointToEnd(module.getBody());
  return gpu::GPUModuleOp::create(builder, module.getLoc(), kKernelModuleName);
}

func::FuncOp mlir::fp8::getOrCreateLauncher(ModuleOp module, Operation *op,
                                            gpu::GPUModuleOp kernels,
                                            StringRef kernelName,
                                            StringRef launcherName,
                                            FunctionType type,
                                            ArrayRef<LauncherAccess> access) {
  if (auto launcher = module.lookupSymbol<func::FuncOp>(launcherName)) {
    if (launcher.getFunctionType() == type)
      return launcher;
    // Same kernel, other static shapes (e.g. a different static M).
    op->emitOpError() << "operand types differ from an earlier call of kernel "
                   << kernelName << "; use a dynamic M";
    return nullptr;
  }
  OpBuilder builder(module.getContext());
  builder.setInsertionPointToStart(module.getBody());
  auto launcher = func::FuncOp::create(builder, op->getLoc(), launcherName, type);
  launcher.setPrivate();
  for (unsigned i = 0, e = launcher.getNumArguments(); i < e; ++i) {
    LauncherAccess use = i < access.size() ? access[i] : LauncherAccess::Read;
    launcher.setArgAttr(
        i, bufferization::BufferizationDialect::kBufferAccessAttrName,
        builder.getStringAttr(use == LauncherAccess::Read    ? "read"
                              : use == LauncherAccess::Write ? "write"
                                                             : "read-write"));
  }
  launcher->setAttr(kKernelAttrName,
                    SymbolRefAttr::get(kernels.getNameAttr(),
                                       {FlatSymbolRefAttr::get(
                                           builder.getStringAttr(kernelName))}));
  return launcher;
}

FailureOr<ValueRange>
mlir::fp8::createLaunch(Operation *op, gpu::GPUModuleOp kernels,
                        StringRef kernelName, ValueRange operands,
                        ArrayRef<LauncherAccess> access,
                        std::optional<unsigned> inPlaceOf) {
  OpBuilder builder(op);
  // The launcher takes the kernel's operands as dense buffers.
  SmallVector<Type> bufferTypes;
  SmallVector<int64_t> outputs;
  SmallVector<Type> resultTypes;
  for (auto [index, operand] : llvm::enumerate(operands)) {
    auto type = cast<RankedTensorType>(operand.getType());
    bufferTypes.push_back(
        MemRefType::get(type.getShape(), type.getElementType()));
    if (access[index] != LauncherAccess::Read) {
      outputs.push_back(index);
      resultTypes.push_back(type);
    }
  }
  func::FuncOp launcher = getOrCreateLauncher(
      kernels->getParentOfType<ModuleOp>(), op, kernels, kernelName,
      (kernelName + "_launch_into").str(),
      builder.getFunctionType(bufferTypes, {}), access);
  if (!launcher)
    return failure();
  if (inPlaceOf)
    launcher.setArgAttr(operands.size() - 1, kInPlaceOfAttrName,
                        builder.getI64IntegerAttr(*inPlaceOf));
  return LaunchOp::create(builder, op->getLoc(), resultTypes,
                          launcher.getSymName(), operands, outputs)
      .getResults();
}

Value mlir::fp8::createZeroFilled(Operation *op, RankedTensorType type) {
  OpBuilder builder(op);
  Location loc = op->getLoc();
  Value zero = arith::ConstantOp::create(builder, loc,
                                         builder.getFloatAttr(type.getElementType(), 0.0));
  Value empty = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                        type.getElementType());
  return linalg::FillOp::create(builder, loc, ValueRange{zero},
                                ValueRange{empty})
      .getResult(0);
}

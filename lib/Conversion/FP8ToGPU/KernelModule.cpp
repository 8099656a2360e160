//===- KernelModule.cpp - Kernels and their host launchers ----------------===//

#include "KernelModule.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

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
                                            ArrayRef<bool> writtenArgs) {
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
    bool written = i < writtenArgs.size() && writtenArgs[i];
    launcher.setArgAttr(
        i, bufferization::BufferizationDialect::kBufferAccessAttrName,
        builder.getStringAttr(written ? "write" : "read"));
  }
  launcher->setAttr(kKernelAttrName,
                    SymbolRefAttr::get(kernels.getNameAttr(),
                                       {FlatSymbolRefAttr::get(
                                           builder.getStringAttr(kernelName))}));
  return launcher;
}

//===- fp8-opt.cpp - mlir-opt with the fp8 dialect and passes -------------===//
//
// Accepts every mlir-opt flag. Registers the fp8 dialect and passes plus all
// upstream dialects, extensions and passes (the lowering pipeline uses GPU,
// NVVM, NVGPU, bufferization, linalg, ... and users mix fp8 ops with them).
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/Passes.h"
#include "FP8/Dialect/FP8/IR/FP8Dialect.h"
#include "FP8/Dialect/FP8/Transforms/BufferizableOpInterfaceImpl.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"
#include "FP8/Target/PTX/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::fp8::registerFP8Passes();
  mlir::fp8::registerFP8ConversionPasses();
  mlir::fp8::registerFP8TargetPTXPasses();
  mlir::fp8::registerFP8ToPTXPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates gpu.module bodies to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::fp8::FP8Dialect>();
  mlir::fp8::registerBufferizableOpInterfaceExternalModels(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "FP8-MLIR optimizer driver\n", registry));
}

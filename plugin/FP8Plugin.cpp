//===- FP8Plugin.cpp - fp8 dialect and passes for stock mlir-opt ----------===//
//
//   mlir-opt --load-dialect-plugin=FP8Plugin.so \
//            --load-pass-plugin=FP8Plugin.so in.mlir --fp8-to-ptx=chip=sm_90a
//
// The plugin links libMLIR.so, the library mlir-opt runs on, so the
// dialect's and the passes' TypeIDs and registries are mlir-opt's own.
//
//===----------------------------------------------------------------------===//

#include "FP8/Compiler/Compiler.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

#include "llvm/Config/llvm-config.h"

using namespace mlir;

/// The fp8 dialect plus what fp8-to-ptx needs (dialects, interfaces and
/// LLVM IR translations that mlir-opt may not register itself).
extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "FP8", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            fp8::registerFP8CompilerDialects(*registry);
          }};
}

/// Every fp8 pass and the fp8-to-ptx / fp8-gpu-module-to-ptx pipelines.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "FP8Passes", LLVM_VERSION_STRING,
          []() { fp8::registerAllFP8Passes(); }};
}

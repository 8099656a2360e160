//===- fp8-fuzz.cpp - libFuzzer target over parse, verify and fp8-to-ptx --===//
//
// Each input is parsed as an MLIR module, verified, and compiled with the
// whole fp8-to-ptx pipeline for sm_90a and for sm_100a. Diagnostics are the
// expected outcome for most inputs and are discarded; what the fuzzer looks
// for is anything else: a crash, an LLVM fatal error (which aborts), a hang,
// or a sanitizer report. Build and run: see docs/robustness.md.
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Dialect.h"
#include "FP8/Dialect/FP8/Transforms/BufferizableOpInterfaceImpl.h"
#include "FP8/Target/PTX/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace mlir;

static MLIRContext &getContext() {
  static MLIRContext *context = [] {
    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllExtensions(registry);
    registerAllToLLVMIRTranslations(registry);
    registry.insert<fp8::FP8Dialect>();
    fp8::registerBufferizableOpInterfaceExternalModels(registry);
    auto *ctx = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
    ctx->loadAllAvailableDialects();
    return ctx;
  }();
  return *context;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext &context = getContext();
  ScopedDiagnosticHandler discard(&context, [](Diagnostic &) {
    return success();
  });
  // MLIR's lexer relies on a NUL after the buffer, as every file MLIR reads
  // has (MemoryBuffer); libFuzzer's bytes end without one.
  std::string source(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, ParserConfig(&context));
  if (!module || failed(verify(*module)))
    return 0;
  for (const char *chip : {"sm_90a", "sm_100a"}) {
    OwningOpRef<ModuleOp> copy = module->clone();
    PassManager pm(&context);
    fp8::FP8ToPTXOptions options;
    options.chip = chip;
    fp8::buildFP8ToPTXPipeline(pm, options);
    (void)pm.run(*copy);
  }
  return 0;
}

//===- Compiler.cpp - C API of the FP8-MLIR compiler ----------------------===//

#include "FP8-c/Compiler.h"
#include "FP8/Compiler/Compiler.h"
#include "FP8/Target/Chip.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::fp8;

static CompileResult *unwrap(Fp8CompileResult result) {
  return static_cast<CompileResult *>(result.ptr);
}

static Fp8CompileResult wrap(CompileResult *result) { return {result}; }

static constexpr unsigned kDefaultOptLevel = 3;

intptr_t fp8GetNumSupportedChips(void) { return getSupportedChips().size(); }

MlirStringRef fp8GetSupportedChipName(intptr_t pos) {
  StringRef name = getSupportedChips()[pos].name;
  return mlirStringRefCreate(name.data(), name.size());
}

void fp8RegisterCompilerDialects(MlirDialectRegistry registry) {
  registerFP8CompilerDialects(*unwrap(registry));
}

void fp8RegisterPasses(void) { registerAllFP8Passes(); }

Fp8CompileOptions fp8CompileOptionsGetDefault(void) {
  return {mlirStringRefCreate(nullptr, 0), kDefaultOptLevel,
          mlirStringRefCreate(nullptr, 0), mlirStringRefCreate(nullptr, 0)};
}

/// The pipeline options of `options` (the defaults when null).
static void setPipelineOptions(const Fp8CompileOptions *options,
                               FP8ToPTXOptions &pipeline) {
  Fp8CompileOptions given =
      options ? *options : fp8CompileOptionsGetDefault();
  pipeline.chip = unwrap(given.chip).str();
  pipeline.optLevel = given.optLevel;
  pipeline.defaultRecipe = unwrap(given.defaultRecipe).str();
  pipeline.gemmConfig = unwrap(given.gemmConfig).str();
}

Fp8CompileResult fp8CompileModule(MlirModule module,
                                  const Fp8CompileOptions *options) {
  ModuleOp op = unwrap(module);
  FP8ToPTXOptions pipeline;
  setPipelineOptions(options, pipeline);
  auto result = std::make_unique<CompileResult>();
  DiagnosticCollector collector(*op.getContext());
  FailureOr<CompiledModule> compiled = compileToPTX(op, pipeline);
  if (succeeded(compiled)) {
    result->succeeded = true;
    result->kernels = std::move(compiled->kernels);
    result->programJSON = std::move(compiled->programJSON);
  }
  result->diagnostics = collector.takeDiagnostics();
  return wrap(result.release());
}

Fp8CompileResult fp8CompileSource(MlirContext ctx, MlirStringRef source,
                                  MlirStringRef sourceName,
                                  const Fp8CompileOptions *options) {
  FP8ToPTXOptions pipeline;
  setPipelineOptions(options, pipeline);
  return wrap(new CompileResult(compileSourceToPTX(
      *unwrap(ctx), unwrap(source), unwrap(sourceName), pipeline)));
}

bool fp8CompileResultSucceeded(Fp8CompileResult result) {
  return unwrap(result)->succeeded;
}

intptr_t fp8CompileResultGetNumKernels(Fp8CompileResult result) {
  return unwrap(result)->kernels.size();
}

static MlirStringRef wrapString(const std::string &text) {
  return mlirStringRefCreate(text.data(), text.size());
}

MlirStringRef fp8CompileResultGetKernelName(Fp8CompileResult result,
                                            intptr_t pos) {
  return wrapString(unwrap(result)->kernels[pos].name);
}

MlirStringRef fp8CompileResultGetKernelPTX(Fp8CompileResult result,
                                           intptr_t pos) {
  return wrapString(unwrap(result)->kernels[pos].ptx);
}

MlirStringRef fp8CompileResultGetKernelMetadata(Fp8CompileResult result,
                                                intptr_t pos) {
  return wrapString(unwrap(result)->kernels[pos].metadataJSON);
}

MlirStringRef fp8CompileResultGetModuleJSON(Fp8CompileResult result) {
  return wrapString(unwrap(result)->programJSON);
}

intptr_t fp8CompileResultGetNumDiagnostics(Fp8CompileResult result) {
  return unwrap(result)->diagnostics.size();
}

MlirDiagnosticSeverity
fp8CompileResultGetDiagnosticSeverity(Fp8CompileResult result, intptr_t pos) {
  switch (unwrap(result)->diagnostics[pos].severity) {
  case DiagnosticSeverity::Error:
    return MlirDiagnosticError;
  case DiagnosticSeverity::Warning:
    return MlirDiagnosticWarning;
  case DiagnosticSeverity::Note:
    return MlirDiagnosticNote;
  case DiagnosticSeverity::Remark:
    return MlirDiagnosticRemark;
  }
  llvm_unreachable("unknown diagnostic severity");
}

MlirStringRef fp8CompileResultGetDiagnosticLocation(Fp8CompileResult result,
                                                    intptr_t pos) {
  return wrapString(unwrap(result)->diagnostics[pos].location);
}

MlirStringRef fp8CompileResultGetDiagnosticMessage(Fp8CompileResult result,
                                                   intptr_t pos) {
  return wrapString(unwrap(result)->diagnostics[pos].message);
}

MlirStringRef fp8CompileResultGetDiagnosticText(Fp8CompileResult result,
                                                intptr_t pos) {
  return wrapString(unwrap(result)->diagnostics[pos].text);
}

void fp8CompileResultDestroy(Fp8CompileResult result) {
  delete unwrap(result);
}

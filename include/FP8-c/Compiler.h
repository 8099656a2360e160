/*===-- FP8-c/Compiler.h - C API of the FP8-MLIR compiler ---------*- C -*-===*\
|*                                                                            *|
|* Registration of what the fp8-to-ptx pipeline needs, and compilation of a  *|
|* module to one PTX text and one JSON metadata document per kernel and the  *|
|* host program (module.json), with every diagnostic returned in an owned    *|
|* result object (nothing printed).                                          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FP8_C_COMPILER_H
#define FP8_C_COMPILER_H

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Inserts the fp8 dialect, the dialects and interfaces the pipeline uses and
/// their translations to LLVM IR into `registry`.
MLIR_CAPI_EXPORTED void fp8RegisterCompilerDialects(MlirDialectRegistry registry);

/// Registers every fp8 pass and the fp8-to-ptx pipelines globally (for
/// mlirParsePassPipeline and friends).
MLIR_CAPI_EXPORTED void fp8RegisterPasses(void);

/// The number of chips the compiler generates code for.
MLIR_CAPI_EXPORTED intptr_t fp8GetNumSupportedChips(void);

/// The name of supported chip `pos` (below fp8GetNumSupportedChips), e.g.
/// "sm_90a"; the string is static.
MLIR_CAPI_EXPORTED MlirStringRef fp8GetSupportedChipName(intptr_t pos);

/// Pipeline options; strings need not be NUL-terminated.
struct Fp8CompileOptions {
  /// One of the supported chips, or empty for the fp8.target attribute of
  /// the module (no chip at all is an error of the compilation).
  MlirStringRef chip;
  unsigned optLevel;          ///< NVPTX optimization level, 0 to 3
  MlirStringRef defaultRecipe; ///< recipe attribute text, may be empty
  MlirStringRef gemmConfig;    ///< #fp8.gemm_config text, may be empty
};
typedef struct Fp8CompileOptions Fp8CompileOptions;

/// No chip (the module's fp8.target), optLevel 3, no default recipe or
/// configuration.
MLIR_CAPI_EXPORTED Fp8CompileOptions fp8CompileOptionsGetDefault(void);

#define DEFINE_C_API_STRUCT(name, storage)                                     \
  struct name {                                                                \
    storage *ptr;                                                              \
  };                                                                           \
  typedef struct name name

/// The owned outcome of a compilation; destroy with fp8CompileResultDestroy.
DEFINE_C_API_STRUCT(Fp8CompileResult, void);

#undef DEFINE_C_API_STRUCT

/// Compiles `module` (lowered in place) with the given options. Never
/// aborts on bad input or options: the failure and its diagnostics are in
/// the result.
MLIR_CAPI_EXPORTED Fp8CompileResult
fp8CompileModule(MlirModule module, const Fp8CompileOptions *options);

/// Parses `source` in `ctx` (locations name `sourceName`) and compiles it;
/// parse errors are diagnostics of the result too. `ctx` must have the
/// dialects of fp8RegisterCompilerDialects.
MLIR_CAPI_EXPORTED Fp8CompileResult
fp8CompileSource(MlirContext ctx, MlirStringRef source,
                 MlirStringRef sourceName, const Fp8CompileOptions *options);

MLIR_CAPI_EXPORTED bool fp8CompileResultSucceeded(Fp8CompileResult result);

/// The kernels (none when the compilation failed). Strings live as long as
/// the result; `pos` must be below the count.
MLIR_CAPI_EXPORTED intptr_t fp8CompileResultGetNumKernels(Fp8CompileResult result);
MLIR_CAPI_EXPORTED MlirStringRef
fp8CompileResultGetKernelName(Fp8CompileResult result, intptr_t pos);
MLIR_CAPI_EXPORTED MlirStringRef
fp8CompileResultGetKernelPTX(Fp8CompileResult result, intptr_t pos);
/// The JSON metadata document for the runtime (NAME.json).
MLIR_CAPI_EXPORTED MlirStringRef
fp8CompileResultGetKernelMetadata(Fp8CompileResult result, intptr_t pos);

/// The host program of the module's public functions (module.json, format
/// "fp8-mlir-module", naming every kernel above), which fp8rt_module_load
/// reads from a directory holding it beside the kernels' NAME.ptx and
/// NAME.json; empty when the compilation failed.
MLIR_CAPI_EXPORTED MlirStringRef
fp8CompileResultGetModuleJSON(Fp8CompileResult result);

/// Every diagnostic emitted during the compilation, in order (`pos` below
/// the count).
MLIR_CAPI_EXPORTED intptr_t
fp8CompileResultGetNumDiagnostics(Fp8CompileResult result);
MLIR_CAPI_EXPORTED MlirDiagnosticSeverity
fp8CompileResultGetDiagnosticSeverity(Fp8CompileResult result, intptr_t pos);
/// "file:line:col" (or the printed location when it has no file).
MLIR_CAPI_EXPORTED MlirStringRef
fp8CompileResultGetDiagnosticLocation(Fp8CompileResult result, intptr_t pos);
MLIR_CAPI_EXPORTED MlirStringRef
fp8CompileResultGetDiagnosticMessage(Fp8CompileResult result, intptr_t pos);
/// The diagnostic as mlir-opt prints it, notes and source line included.
MLIR_CAPI_EXPORTED MlirStringRef
fp8CompileResultGetDiagnosticText(Fp8CompileResult result, intptr_t pos);

MLIR_CAPI_EXPORTED void fp8CompileResultDestroy(Fp8CompileResult result);

#ifdef __cplusplus
}
#endif

#endif // FP8_C_COMPILER_H

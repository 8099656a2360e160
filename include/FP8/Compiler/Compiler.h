//===- Compiler.h - Embedding API of the FP8-MLIR compiler ------*- C++ -*-===//
//
// What another compiler's driver needs to use FP8-MLIR in its own
// MLIRContext: register the dialect and passes, build the fp8-to-ptx
// pipeline with options, and compile a module to one PTX text and one JSON
// metadata document per kernel, with the diagnostics returned rather than
// printed.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_COMPILER_COMPILER_H
#define FP8_COMPILER_COMPILER_H

#include "FP8/Target/PTX/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

#include <functional>
#include <memory>
#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class DialectRegistry;
class MLIRContext;
class PassManager;
class TimingScope;

namespace fp8 {

/// Inserts the fp8 dialect and its external models (bufferization).
void registerFP8Dialect(DialectRegistry &registry);

/// Inserts everything compileToPTX needs besides the dialects of the input:
/// the fp8 dialect, the dialects the pipeline creates (GPU, NVVM, LLVM,
/// bufferization, memref, SCF, ...) and their translations to LLVM IR, which
/// `gpu-module-to-binary` uses.
void registerFP8CompilerDialects(DialectRegistry &registry);

/// Registers every fp8 pass (transforms, conversion, PTX) and the `fp8-to-ptx` / `fp8-gpu-module-to-ptx`
/// pipelines with the global pass registry (for textual pipelines).
void registerAllFP8Passes();

/// One compiled kernel: what `fp8-compile` writes as NAME.ptx and NAME.json.
struct CompiledKernel {
  std::string name;
  /// The PTX text of the kernel's gpu.module (shared by its kernels).
  std::string ptx;
  /// The JSON metadata document for the host runtime, ending in a newline;
  /// its "ptx" key names `name + ".ptx"`.
  std::string metadataJSON;
};

/// How compileToPTX runs its pass managers (beyond the pipeline options).
struct CompileConfig {
  /// Called on each pass manager before it runs (e.g. to apply the MLIR
  /// command-line options); a failure stops the compilation.
  std::function<LogicalResult(PassManager &)> configurePassManager;
  /// When set, the pass managers are timed under it.
  TimingScope *timer = nullptr;
};

/// Checks the optimization level (0-3) and compiles `module` with the
/// fp8-to-ptx pipeline for `options.chip`, or, when it is empty, for the
/// module's own `fp8.target` (an unknown chip, no chip at all, or a chip
/// other than the module's is an error): the fp8 ops are lowered to kernels
/// in `module` (in place), then each kernel gpu.module is compiled to PTX on
/// a copy. Every error is emitted as a diagnostic on the module's context
/// (install a handler, or use compileToPTX below, to collect them); an fp8
/// op the pipeline cannot compile is an error, never left out.
FailureOr<SmallVector<CompiledKernel>>
compileToPTX(ModuleOp module, const FP8ToPTXOptions &options,
             const CompileConfig &config = {});

/// A diagnostic as text: "LOCATION: SEVERITY: MESSAGE", one line per
/// attached note.
struct DiagnosticRecord {
  DiagnosticSeverity severity;
  std::string location;
  std::string message;
  /// The whole diagnostic, notes included, printed like mlir-opt does.
  std::string text;
};

/// Records every diagnostic of a context while it lives, instead of printing
/// it (handlers registered before it do not see them). With `sourceMgr`, the
/// records' text shows the source line like mlir-opt does.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &context,
                               llvm::SourceMgr *sourceMgr = nullptr);
  ~DiagnosticCollector();
  DiagnosticCollector(const DiagnosticCollector &) = delete;
  DiagnosticCollector &operator=(const DiagnosticCollector &) = delete;

  /// The diagnostics so far, in order; the collector starts over.
  SmallVector<DiagnosticRecord> takeDiagnostics();

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// The outcome of compiling a source text.
struct CompileResult {
  bool succeeded = false;
  SmallVector<CompiledKernel> kernels;
  SmallVector<DiagnosticRecord> diagnostics;
};

/// Parses `source` (named `sourceName` in locations) in `context` and
/// compiles it with compileToPTX. Nothing is printed: every diagnostic of
/// the parse and the compilation, warnings and remarks included, is in the
/// result. `context` must know the dialects of the source and those of
/// registerFP8CompilerDialects.
CompileResult compileSourceToPTX(MLIRContext &context, StringRef source,
                                 StringRef sourceName,
                                 const FP8ToPTXOptions &options);

} // namespace fp8
} // namespace mlir

#endif // FP8_COMPILER_COMPILER_H

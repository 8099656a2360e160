//===- fp8-embed.cpp - Another compiler's driver using FP8-MLIR -----------===//
//
//   fp8-embed INPUT.mlir CHIP
//
// Stands for a compiler that owns its MLIRContext and dialects and adds
// FP8-MLIR to them from an installed package (find_package(FP8MLIR)):
//   1. registers its own dialects (func, arith, tensor, linalg) and the fp8
//      dialect with what the FP8 pipeline needs, and the fp8 passes;
//   2. runs the registered `fp8-to-ptx` pipeline, built from its textual
//      form, on the parsed module;
//   3. compiles the source to PTX + JSON metadata with the C++ API and
//      prints the diagnostics it got back (none are printed by FP8-MLIR).
// Exits with 1 when the compilation fails.
//
//===----------------------------------------------------------------------===//

#include "FP8/Compiler/Compiler.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static int compileFile(MLIRContext &context, StringRef path, StringRef chip) {
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file) {
    llvm::errs() << "fp8-embed: cannot read " << path << "\n";
    return 1;
  }
  StringRef source = (*file)->getBuffer();

  // The registered pipeline, by name and options, as any pass pipeline of
  // this compiler would be (diagnostics go to the context's handler).
  std::string pipeline = ("fp8-to-ptx{chip=" + chip + "}").str();
  {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, ParserConfig(&context), path);
    PassManager pm(&context);
    if (!module || failed(parsePassPipeline(pipeline, pm)) ||
        failed(pm.run(*module)))
      llvm::outs() << "pipeline " << pipeline << ": failed\n";
    else
      llvm::outs() << "pipeline " << pipeline << ": "
                   << llvm::range_size(module->getOps<gpu::BinaryOp>())
                   << " gpu.binary\n";
  }

  // The embedding API: PTX and metadata per kernel, diagnostics returned.
  fp8::FP8ToPTXOptions options;
  options.chip = chip.str();
  fp8::CompileResult result =
      fp8::compileSourceToPTX(context, source, path, options);
  for (const fp8::DiagnosticRecord &diag : result.diagnostics)
    llvm::outs() << "diagnostic: " << diag.text;
  if (!result.succeeded) {
    llvm::outs() << "compile: failed\n";
    return 1;
  }
  for (const fp8::CompiledKernel &kernel : result.kernels) {
    bool hasEntry = StringRef(kernel.ptx).contains(".entry " + kernel.name);
    llvm::outs() << "kernel " << kernel.name << ": " << kernel.ptx.size()
                 << " bytes of PTX" << (hasEntry ? " with its .entry" : "")
                 << ", " << kernel.metadataJSON.size()
                 << " bytes of metadata\n";
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    llvm::errs() << "usage: fp8-embed INPUT.mlir CHIP\n";
    return 2;
  }
  // The host compiler's own dialects...
  DialectRegistry registry;
  registry.insert<arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, tensor::TensorDialect>();
  // ...plus the fp8 dialect and what its pipeline needs.
  fp8::registerFP8CompilerDialects(registry);
  fp8::registerAllFP8Passes();
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  return compileFile(context, argv[1], argv[2]);
}

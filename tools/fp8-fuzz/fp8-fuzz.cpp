//===- fp8-fuzz.cpp - libFuzzer target over parse, verify and fp8-to-ptx --===//
//
// Each input is parsed as an MLIR module, verified, and compiled with
// compileToPTX (the fp8-to-ptx pipeline, what fp8-compile runs) for sm_90a
// and for sm_100a. Diagnostics are the expected outcome for most inputs and
// are discarded; what the fuzzer looks for is anything else: a crash, an
// LLVM fatal error (which aborts), a hang, a sanitizer report, or a kernel
// compiled from an input outside the contract (docs/contract.md): every
// compiled kernel's metadata is checked against the contract's limits, and
// a violation aborts. Build and run: see docs/robustness.md.
//
//===----------------------------------------------------------------------===//

#include "FP8/Compiler/Compiler.h"
#include "FP8/Target/PTX/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

static MLIRContext &getContext() {
  static MLIRContext *context = [] {
    DialectRegistry registry;
    fp8::registerFP8CompilerDialects(registry);
    auto *ctx = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
    ctx->loadAllAvailableDialects();
    return ctx;
  }();
  return *context;
}

/// The contract's limits on what a kernel's metadata may hold.
static constexpr int64_t kMaxExtent = (int64_t(1) << 31) - 1;
static constexpr int64_t kMaxTmaDim = int64_t(1) << 32;
static constexpr int64_t kMaxTmaStride = int64_t(1) << 40;

[[noreturn]] static void violation(const fp8::CompiledKernel &kernel,
                                   const llvm::Twine &what) {
  llvm::errs() << "contract violation: kernel " << kernel.name << " compiled "
               << "with " << what << "\n"
               << kernel.metadataJSON;
  std::abort();
}

/// Every integer in `array` (symbols are strings) is in [lo, hi].
static void checkIntegers(const fp8::CompiledKernel &kernel,
                          const llvm::json::Array *array, int64_t lo,
                          int64_t hi, llvm::StringRef what) {
  if (!array)
    return;
  for (const llvm::json::Value &v : *array)
    if (std::optional<int64_t> i = v.getAsInteger(); i && (*i < lo || *i > hi))
      violation(kernel, what + " " + llvm::Twine(*i));
}

/// Aborts when `kernel`'s metadata leaves the contract: operand extents in
/// [1, 2^31 - 1], TMA dims in [1, 2^32], TMA strides multiples of 16 below
/// 2^40.
static void checkContract(const fp8::CompiledKernel &kernel) {
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse(kernel.metadataJSON);
  if (!json) {
    llvm::consumeError(json.takeError());
    violation(kernel, "metadata that is not JSON");
  }
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    violation(kernel, "metadata that is not a JSON object");
  if (const llvm::json::Array *operands = root->getArray("operands"))
    for (const llvm::json::Value &operand : *operands)
      if (const llvm::json::Object *o = operand.getAsObject())
        checkIntegers(kernel, o->getArray("shape"), 1, kMaxExtent,
                      "an operand extent");
  if (const llvm::json::Array *maps = root->getArray("tensor_maps"))
    for (const llvm::json::Value &map : *maps) {
      const llvm::json::Object *m = map.getAsObject();
      if (!m)
        continue;
      checkIntegers(kernel, m->getArray("dims"), 1, kMaxTmaDim,
                    "a tensor map dim");
      checkIntegers(kernel, m->getArray("strides_bytes"), 16,
                    kMaxTmaStride - 1, "a tensor map stride");
      if (const llvm::json::Array *strides = m->getArray("strides_bytes"))
        for (const llvm::json::Value &v : *strides)
          if (std::optional<int64_t> i = v.getAsInteger(); i && *i % 16 != 0)
            violation(kernel, "a tensor map stride of " + llvm::Twine(*i) +
                                  " bytes (not a multiple of 16)");
    }
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
    fp8::FP8ToPTXOptions options;
    options.chip = chip;
    FailureOr<fp8::CompiledModule> compiled = fp8::compileToPTX(*copy, options);
    if (succeeded(compiled))
      for (const fp8::CompiledKernel &kernel : compiled->kernels)
        checkContract(kernel);
  }
  return 0;
}

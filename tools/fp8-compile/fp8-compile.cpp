//===- fp8-compile.cpp - Compile fp8 IR to PTX kernels and metadata -------===//
//
//   fp8-compile in.mlir --chip=sm_90a -o DIR [--opt-level=3] [--time]
//
// Runs the fp8-to-ptx pipeline and writes, for each kernel NAME, DIR/NAME.ptx
// and DIR/NAME.json (its `fp8.kernel_metadata` plus format, version and the
// PTX file name), which the host runtime loads and launches. The pipeline
// runs in two halves, so that the metadata is read from the gpu.func
// kernels before they are lowered to LLVM, and so that each gpu.module is
// compiled, and timed, on its own.
//
// Every failure is a diagnostic and a non-zero exit code; nothing reaches
// the LLVM backend before fp8-verify-target-support has vetted it.
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Dialect.h"
#include "FP8/Dialect/FP8/Transforms/BufferizableOpInterfaceImpl.h"
#include "FP8/Target/Chip.h"
#include "FP8/Target/PTX/KernelArtifacts.h"
#include "FP8/Target/PTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fp8;

namespace {
/// Documented in --help; scripts tell the failure kinds apart by them.
enum ExitCode : int {
  kSuccess = 0,
  kUsageError = 1,
  kInputError = 2,
  kCompileError = 3,
  kOutputError = 4,
};
} // namespace

static constexpr llvm::StringLiteral kToolName = "fp8-compile";
static constexpr int kMaxOptLevel = 3;
/// The metadata key naming the chip a kernel was built for.
static constexpr llvm::StringLiteral kMetadataChipKey = "chip";
/// Indentation of the JSON files.
static constexpr int kJSONIndent = 2;

static constexpr const char *kOverview = R"(FP8-MLIR kernel compiler

Compiles the fp8 ops of an MLIR file (or already-lowered kernel gpu.modules)
to PTX with the fp8-to-ptx pipeline and writes, for each kernel NAME:
  DIR/NAME.ptx   the PTX text of its module
  DIR/NAME.json  its launch metadata for the FP8-MLIR runtime
                 ("format": "fp8-mlir-kernel", "version": 1)

Exit codes:
  0  success
  1  invalid command line (unknown chip, optimization level out of range)
  2  the input cannot be read or parsed
  3  compilation failed (diagnostics on stderr, with locations)
  4  the output directory is missing or a file cannot be written
)";

static llvm::cl::OptionCategory
    compileCategory("fp8-compile options",
                    "MLIR and LLVM debugging options are listed by "
                    "--help-hidden");

static llvm::cl::opt<std::string>
    inputFilename(llvm::cl::Positional,
                  llvm::cl::desc("<input .mlir file, '-' for stdin>"),
                  llvm::cl::init("-"), llvm::cl::cat(compileCategory));

static llvm::cl::opt<std::string>
    outputDir("o", llvm::cl::Required,
              llvm::cl::desc("Existing directory to write NAME.ptx and "
                             "NAME.json into"),
              llvm::cl::value_desc("dir"), llvm::cl::cat(compileCategory));

static llvm::cl::opt<std::string>
    chipName("chip", llvm::cl::init("sm_90a"),
             llvm::cl::desc("Target GPU (sm_90a, sm_100a)"),
             llvm::cl::value_desc("chip"), llvm::cl::cat(compileCategory));

static llvm::cl::opt<unsigned>
    optLevel("opt-level", llvm::cl::init(3),
             llvm::cl::desc("LLVM optimization level for NVPTX (0-3)"),
             llvm::cl::value_desc("level"), llvm::cl::cat(compileCategory));

static llvm::cl::opt<bool>
    printTiming("time", llvm::cl::init(false),
                llvm::cl::desc("Print the wall time of each phase, kernel "
                               "module and pass on stderr"),
                llvm::cl::cat(compileCategory));

/// The MLIR option (registered by registerMLIRContextCLOptions) that adds
/// the op in generic form to each diagnostic.
static constexpr llvm::StringLiteral kPrintOpOnDiagnosticOption =
    "mlir-print-op-on-diagnostic";

static bool isOptionGiven(StringRef name) {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  return it != options.end() && it->second->getNumOccurrences() > 0;
}

/// Errors that have no location in the input.
static int fail(ExitCode code, const Twine &message) {
  llvm::WithColor::error(llvm::errs(), kToolName) << message << "\n";
  return code;
}

namespace {
/// One gpu.module and what becomes of it.
struct CompiledModule {
  gpu::GPUModuleOp module;
  SmallVector<const KernelInfo *> kernels;
  std::string ptx;
};

/// A file to write: its name in the output directory and its contents.
struct OutputFile {
  std::string name;
  std::string contents;
};
} // namespace

/// Runs `build`'s passes on `op`, timed under `timer` when --time is given.
static LogicalResult
runPipeline(Operation *op, TimingScope &timer,
            function_ref<void(OpPassManager &, const FP8ToPTXOptions &)> build,
            const FP8ToPTXOptions &options) {
  PassManager pm(op->getContext(), op->getName().getStringRef());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  if (printTiming)
    pm.enableTiming(timer);
  build(pm, options);
  return pm.run(op);
}

/// Warns about fp8 ops left in host code: no kernel computes them, so the
/// runtime, which only launches the kernels, would skip them.
static void warnAboutHostFP8Ops(ModuleOp module, Dialect *fp8Dialect) {
  module.walk([&](Operation *op) {
    if (isa<gpu::GPUModuleOp>(op))
      return WalkResult::skip();
    if (op->getDialect() == fp8Dialect)
      op->emitWarning() << "'" << op->getName()
                        << "' is not compiled to a kernel by fp8-to-ptx: "
                           "the runtime will not compute it";
    return WalkResult::advance();
  });
}

/// Compiles each gpu.module of `module` to PTX, one at a time on a copy in
/// its own builtin.module (host code never enters the device pipeline).
static LogicalResult generatePTX(ModuleOp module,
                                 MutableArrayRef<CompiledModule> compiled,
                                 const FP8ToPTXOptions &options,
                                 TimingScope &timer) {
  bool failed = false;
  for (CompiledModule &unit : compiled) {
    std::string label;
    llvm::raw_string_ostream os(label);
    os << "gpu.module @" << unit.module.getName() << " (";
    llvm::interleaveComma(unit.kernels, os,
                          [&](const KernelInfo *k) { os << k->name; });
    os << ")";
    TimingScope moduleTimer = timer.nest(label);

    OwningOpRef<ModuleOp> single = ModuleOp::create(unit.module.getLoc());
    (*single)->setDiscardableAttrs(module->getDiscardableAttrDictionary());
    single->getBody()->push_back(unit.module->clone());
    if (mlir::failed(runPipeline(*single, moduleTimer,
                                 buildFP8GPUModuleToPTXPipeline, options))) {
      failed = true;
      continue;
    }
    FailureOr<StringRef> ptx = getBinaryPTX(*single, unit.module.getName());
    if (mlir::failed(ptx)) {
      failed = true;
      continue;
    }
    unit.ptx = ptx->str();
  }
  return failure(failed);
}

static LogicalResult writeFile(StringRef dir, const OutputFile &file) {
  SmallString<256> path(dir);
  llvm::sys::path::append(path, file.name);
  // Written to a temporary file and renamed: a reader never sees half a file.
  if (llvm::Error error = llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
        os << file.contents;
        return llvm::Error::success();
      })) {
    fail(kOutputError,
         "cannot write '" + path + "': " + llvm::toString(std::move(error)));
    return failure();
  }
  return success();
}

static int compile() {
  // Everything the command line alone gets wrong fails before any work.
  if (!lookupChip(chipName))
    return fail(kUsageError, "unknown chip '" + chipName +
                                 "': expected one of " +
                                 describeSupportedChips());
  if (optLevel > kMaxOptLevel)
    return fail(kUsageError, "--opt-level=" + Twine(optLevel) +
                                 " is not between 0 and " +
                                 Twine(kMaxOptLevel));
  if (!llvm::sys::fs::is_directory(outputDir))
    return fail(kOutputError, "output directory '" + outputDir +
                                  "' does not exist or is not a directory");

  DefaultTimingManager timing;
  timing.setEnabled(printTiming);
  timing.setDisplayMode(DefaultTimingManager::DisplayMode::Tree);
  TimingScope rootTimer = timing.getRootScope();

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // gpu-module-to-binary translates the gpu.modules to LLVM IR.
  registerAllToLLVMIRTranslations(registry);
  registry.insert<FP8Dialect>();
  fp8::registerBufferizableOpInterfaceExternalModels(registry);
  MLIRContext context(registry);
  // Diagnostics point at the input; the generic form of the op is noise
  // unless asked for.
  if (!isOptionGiven(kPrintOpOnDiagnosticOption))
    context.printOpOnDiagnostic(false);

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input)
    return fail(kInputError, errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  // Every diagnostic from here on, with its location in the input.
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  FP8ToPTXOptions options;
  options.chip = chipName;
  options.optLevel = optLevel;

  OwningOpRef<ModuleOp> module;
  {
    TimingScope parseTimer = rootTimer.nest("parse");
    module = parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  }
  if (!module)
    return kInputError;

  {
    TimingScope lowerTimer = rootTimer.nest("lower to GPU kernels");
    if (failed(
            runPipeline(*module, lowerTimer, buildFP8ToGPUPipeline, options)))
      return kCompileError;
  }
  warnAboutHostFP8Ops(*module, context.getLoadedDialect<FP8Dialect>());

  // The metadata lives on the gpu.func kernels, which the device pipeline
  // lowers to llvm.func and then replaces by gpu.binary: read it now.
  FailureOr<SmallVector<KernelInfo>> kernels = collectKernels(*module);
  if (failed(kernels))
    return kCompileError;
  // The runtime trusts the metadata's chip; it must be the one compiled for.
  bool wrongChip = false;
  for (const KernelInfo &kernel : *kernels) {
    auto chip = kernel.metadata.getAs<StringAttr>(kMetadataChipKey);
    if (chip && chip.getValue() != chipName) {
      emitError(kernel.loc) << "kernel @" << kernel.name << " is for " << chip
                            << " but --chip=" << chipName;
      wrongChip = true;
    }
  }
  if (wrongChip)
    return kCompileError;
  if (kernels->empty()) {
    emitError(module->getLoc())
        << "nothing to compile: no gpu.func kernel after lowering";
    return kCompileError;
  }
  // Kernel name -> its JSON document. Converted before code generation so
  // that metadata errors come first.
  llvm::StringMap<std::string> jsonDocuments;
  for (const KernelInfo &kernel : *kernels) {
    FailureOr<llvm::json::Value> json =
        buildKernelJSON(kernel, kernel.name + ".ptx");
    if (failed(json))
      return kCompileError;
    llvm::raw_string_ostream os(jsonDocuments[kernel.name]);
    llvm::json::OStream(os, kJSONIndent).value(*json);
    os << "\n";
  }

  SmallVector<CompiledModule> compiled;
  for (auto gpuModule : module->getOps<gpu::GPUModuleOp>()) {
    CompiledModule unit{gpuModule, {}, {}};
    for (const KernelInfo &kernel : *kernels)
      if (kernel.moduleName == gpuModule.getName())
        unit.kernels.push_back(&kernel);
    // A module without kernels (device functions only) has nothing to run.
    if (!unit.kernels.empty())
      compiled.push_back(std::move(unit));
  }
  {
    TimingScope codegenTimer = rootTimer.nest("generate PTX");
    if (failed(generatePTX(*module, compiled, options, codegenTimer)))
      return kCompileError;
  }

  // Kernels of one gpu.module share its PTX; each gets its own copy so that
  // NAME.json always sits beside NAME.ptx.
  SmallVector<OutputFile> files;
  for (const CompiledModule &unit : compiled) {
    for (const KernelInfo *kernel : unit.kernels) {
      files.push_back({kernel->name + ".ptx", unit.ptx});
      files.push_back({kernel->name + ".json", jsonDocuments[kernel->name]});
    }
  }
  {
    TimingScope writeTimer = rootTimer.nest("write");
    for (const OutputFile &file : files)
      if (failed(writeFile(outputDir, file)))
        return kOutputError;
  }
  return kSuccess;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // --mlir-print-ir-after-all, --mlir-disable-threading, ... for debugging.
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  llvm::cl::HideUnrelatedOptions(compileCategory);
  llvm::cl::ParseCommandLineOptions(argc, argv, kOverview);
  return compile();
}

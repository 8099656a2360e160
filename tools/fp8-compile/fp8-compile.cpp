//===- fp8-compile.cpp - Compile fp8 IR to PTX kernels and metadata -------===//
//
//   fp8-compile in.mlir --chip=sm_90a -o DIR [--sm-count=N] [--opt-level=3]
//               [--time]
//
// Runs the fp8-to-ptx pipeline (mlir::fp8::compileToPTX, FP8/Compiler),
// which first attaches the chip to the module as its fp8.target (without
// --chip, the input's own fp8.target is the target), and
// writes, for each kernel NAME, DIR/NAME.ptx and DIR/NAME.json (its
// `fp8.kernel_metadata` plus format, version and the PTX file name), and
// DIR/module.json, the host program of every public function (which kernels
// it launches, in order, on which tensors), which the host runtime loads and
// runs.
//
// Every failure is a diagnostic and a non-zero exit code; nothing reaches
// the LLVM backend before fp8-verify-target-support has vetted it.
//
//===----------------------------------------------------------------------===//

#include "FP8/Compiler/Compiler.h"
#include "FP8/Target/Chip.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"

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
/// The host program's file in the output directory.
static constexpr llvm::StringLiteral kModuleProgramFileName = "module.json";

static constexpr const char *kOverview = R"(FP8-MLIR kernel compiler

Compiles the fp8 ops of an MLIR file (or already-lowered kernel gpu.modules)
to PTX with the fp8-to-ptx pipeline for --chip (or, without it, for the
fp8.target attribute of the input module) and writes, for each kernel NAME:
  DIR/NAME.ptx   the PTX text of its module
  DIR/NAME.json  its launch metadata for the FP8-MLIR runtime
                 ("format": "fp8-mlir-kernel", "version": 1)
and DIR/module.json, the host program of every public function of the input
("format": "fp8-mlir-module", "version": 1: arguments, results, workspace
buffers and the ordered kernel launches), which fp8rt_module_load runs. An
op of a public function that no kernel runs is an error.

Exit codes:
  0  success
  1  invalid command line (unknown chip, negative SM count, optimization
     level out of range)
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
    chipName("chip",
             llvm::cl::desc("Target GPU (sm_90a, sm_100a); default: the "
                            "input module's fp8.target"),
             llvm::cl::value_desc("chip"), llvm::cl::cat(compileCategory));

static llvm::cl::opt<int64_t>
    smCount("sm-count", llvm::cl::init(0),
            llvm::cl::desc("SMs of the GPU for the tile heuristic (default: "
                           "the chip's, 132 on sm_90a, 148 on sm_100a)"),
            llvm::cl::value_desc("n"), llvm::cl::cat(compileCategory));

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
/// A file to write: its name in the output directory and its contents.
struct OutputFile {
  std::string name;
  std::string contents;
};
} // namespace

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
  if (!chipName.empty())
    if (llvm::Error error = parseChip(chipName).takeError())
      return fail(kUsageError, llvm::toString(std::move(error)));
  if (smCount < 0)
    return fail(kUsageError, "--sm-count=" + Twine(smCount) +
                                 " is negative: expected a number of SMs "
                                 "(0: the chip's)");
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
  registerFP8CompilerDialects(registry);
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
  options.smCount = smCount;
  options.optLevel = optLevel;

  OwningOpRef<ModuleOp> module;
  {
    TimingScope parseTimer = rootTimer.nest("parse");
    module = parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  }
  if (!module)
    return kInputError;

  CompileConfig config;
  // --mlir-print-ir-after-all, --mlir-timing, ... apply to every pipeline.
  config.configurePassManager = [](PassManager &pm) {
    return applyPassManagerCLOptions(pm);
  };
  if (printTiming)
    config.timer = &rootTimer;
  FailureOr<CompiledModule> compiled = compileToPTX(*module, options, config);
  if (failed(compiled))
    return kCompileError;

  // Kernels of one gpu.module share its PTX; each gets its own copy so that
  // NAME.json always sits beside NAME.ptx. module.json names them all.
  SmallVector<OutputFile> files;
  for (const CompiledKernel &kernel : compiled->kernels) {
    files.push_back({kernel.name + ".ptx", kernel.ptx});
    files.push_back({kernel.name + ".json", kernel.metadataJSON});
  }
  files.push_back({kModuleProgramFileName.str(), compiled->programJSON});
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

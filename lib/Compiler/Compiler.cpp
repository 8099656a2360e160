//===- Compiler.cpp - Embedding API of the FP8-MLIR compiler --------------===//

#include "FP8/Compiler/Compiler.h"
#include "FP8/Conversion/FP8ToGPU/Collectives.h"
#include "FP8/Conversion/Passes.h"
#include "FP8/Conversion/QuantizeKernels/ConvertKernel.h"
#include "FP8/Dialect/FP8/IR/FP8Dialect.h"
#include "FP8/Dialect/FP8/IR/FP8Target.h"
#include "FP8/Dialect/FP8/Transforms/BufferizableOpInterfaceImpl.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"
#include "FP8/Target/PTX/KernelArtifacts.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <utility>

using namespace mlir;
using namespace mlir::fp8;

/// The NVPTX backend's optimization levels.
static constexpr unsigned kMaxOptLevel = 3;
/// Indentation of the JSON documents.
static constexpr int kJSONIndent = 2;

void mlir::fp8::registerFP8Dialect(DialectRegistry &registry) {
  registry.insert<FP8Dialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
}

void mlir::fp8::registerFP8CompilerDialects(DialectRegistry &registry) {
  // The pipeline goes through bufferization, GPU outlining, NVVM and LLVM:
  // their dialects, the interfaces other dialects implement for them
  // (bufferization, convert-to-LLVM, the NVVM target) and the translations
  // to LLVM IR are all needed, and they are only loaded when used.
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registerFP8Dialect(registry);
}

void mlir::fp8::registerAllFP8Passes() {
  registerFP8Passes();
  registerFP8ConversionPasses();
  registerFP8TargetPTXPasses();
  registerFP8ToPTXPipelines();
}

namespace {
/// One gpu.module and the kernels it holds.
struct KernelModule {
  gpu::GPUModuleOp module;
  SmallVector<const KernelInfo *> kernels;
  std::string ptx;
};
} // namespace

/// Runs `build`'s passes on `op`.
static LogicalResult
runPipeline(Operation *op, TimingScope &timer,
            function_ref<void(OpPassManager &, const FP8ToPTXOptions &)> build,
            const FP8ToPTXOptions &options, const CompileConfig &config) {
  PassManager pm(op->getContext(), op->getName().getStringRef());
  if (config.configurePassManager && failed(config.configurePassManager(pm)))
    return failure();
  if (config.timer)
    pm.enableTiming(timer);
  build(pm, options);
  return pm.run(op);
}

/// The fp8 ops in host code (outside gpu.modules) of `module`.
static SmallVector<Operation *> getHostFP8Ops(ModuleOp module) {
  Dialect *fp8Dialect = module->getContext()->getLoadedDialect<FP8Dialect>();
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<gpu::GPUModuleOp>(op))
      return WalkResult::skip();
    if (op->getDialect() == fp8Dialect)
      ops.push_back(op);
    return WalkResult::advance();
  });
  return ops;
}

/// An error for each fp8 op left in host code after lowering: no kernel
/// computes it, and the runtime only launches kernels. (The lowerings
/// report what they cannot take; this guards against one that did not.)
static LogicalResult verifyEverythingLowered(ModuleOp module) {
  SmallVector<Operation *> left = getHostFP8Ops(module);
  for (Operation *op : left)
    op->emitOpError() << "was not compiled to a kernel by fp8-to-ptx, so "
                         "nothing would compute it: this is a compiler "
                         "bug, please report it with this input";
  return failure(!left.empty());
}

/// fp8-build-host-program: the host program of each public function, which
/// every op of its host code must be part of.
static void buildHostProgramPipeline(OpPassManager &pm,
                                     const FP8ToPTXOptions &) {
  pm.addPass(createFP8BuildHostProgram());
}

/// Compiles each gpu.module of `module` to PTX, one at a time on a copy in
/// its own builtin.module (host code never enters the device pipeline).
static LogicalResult generatePTX(ModuleOp module,
                                 MutableArrayRef<KernelModule> units,
                                 const FP8ToPTXOptions &options,
                                 const CompileConfig &config,
                                 TimingScope &timer) {
  bool failed = false;
  for (KernelModule &unit : units) {
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
                                 buildFP8GPUModuleToPTXPipeline, options,
                                 config))) {
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

/// Errors for options that would otherwise reach the LLVM backend, which
/// aborts the process instead of reporting them. (The chip is checked by the
/// pipeline's first pass, fp8-attach-target.)
static LogicalResult verifyOptions(ModuleOp module,
                                   const FP8ToPTXOptions &options) {
  if (options.optLevel > kMaxOptLevel)
    return module.emitError()
           << "optimization level " << options.optLevel.getValue()
           << " is not between 0 and " << kMaxOptLevel;
  return success();
}

/// Errors for ops of the upstream `shard` dialect left in functions other
/// than the collectives the host program runs (fp8-lower-collectives) and
/// the sharding annotations of quantized inputs (fp8-shard-quantize lowers
/// them in the pipeline; fp8-lower-collectives rejects those left):
/// collectives module.json has no step for. Bufferization would otherwise
/// leave ops that name no cause.
static LogicalResult verifyShardOps(ModuleOp module) {
  bool found = false;
  module.walk([&](Operation *op) {
    if (op->getName().getDialectNamespace() != "shard" ||
        isa<SymbolOpInterface>(op) || // shard.grid: a declaration, no step
        isa<shard::AllReduceOp, shard::AllGatherOp, shard::ReduceScatterOp,
            shard::AllSliceOp, shard::ShardOp, shard::ShardingOp>(op))
      return;
    emitUnsupportedShardOpError(op)
        << "lower sharding annotations with fp8-shard-quantize first, or run "
           "this op from Python (fp8mlir.distributed)";
    found = true;
  });
  return failure(found);
}

/// Errors for element-wise arithmetic on the tensor a collective returns
/// (a bias added to a reduced sum, ...): no kernel computes it (it is fused
/// into no GEMM), and bufferization would leave ops that name no cause. The
/// rounding of reduced f32 partial sums to bf16/f16 (fp8-shard-linear's
/// default) is a conversion kernel's (fp8-lower-quantize).
static LogicalResult verifyNoTensorArith(ModuleOp module) {
  bool found = false;
  for (auto func : module.getOps<func::FuncOp>())
    func.walk([&](Operation *op) {
      auto fromCollective = [](Value v) {
        return isa_and_nonnull<shard::AllReduceOp, shard::AllGatherOp,
                               shard::ReduceScatterOp, shard::AllSliceOp>(
            v.getDefiningOp());
      };
      auto truncf = dyn_cast<arith::TruncFOp>(op);
      if (op->getName().getDialectNamespace() != "arith" ||
          !llvm::any_of(op->getResultTypes(), llvm::IsaPred<TensorType>) ||
          !llvm::any_of(op->getOperands(), fromCollective) ||
          (truncf && ConvertProblem::matches(truncf)))
        return;
      op->emitError() << "'" << op->getName() << "' on "
                      << op->getResult(0).getType()
                      << " of a collective's result: no kernel computes "
                         "element-wise arithmetic on tensors in the compiled "
                         "host program";
      found = true;
    });
  return failure(found);
}

FailureOr<CompiledModule>
mlir::fp8::compileToPTX(ModuleOp module, const FP8ToPTXOptions &options,
                        const CompileConfig &config) {
  if (failed(verifyOptions(module, options)) ||
      failed(verifyShardOps(module)) || failed(verifyNoTensorArith(module)))
    return failure();
  // A disabled scope when no timer is given.
  TimingScope disabledTimer;
  TimingScope &rootTimer = config.timer ? *config.timer : disabledTimer;

  size_t numInputOps = getHostFP8Ops(module).size();
  {
    TimingScope lowerTimer = rootTimer.nest("lower to GPU kernels");
    if (failed(runPipeline(module, lowerTimer, buildFP8ToGPUPipeline, options,
                           config)))
      return failure();
  }
  if (failed(verifyEverythingLowered(module)))
    return failure();
  // The host program, read off the host code before the kernels are
  // compiled: an op no kernel runs is an error here.
  {
    TimingScope hostTimer = rootTimer.nest("build the host program");
    if (failed(runPipeline(module, hostTimer, buildHostProgramPipeline,
                           options, config)))
      return failure();
  }
  FailureOr<llvm::json::Value> program = buildModuleProgramJSON(module);
  if (failed(program))
    return failure();

  // The metadata lives on the gpu.func kernels, which the device pipeline
  // lowers to llvm.func and then replaces by gpu.binary: read it now.
  FailureOr<std::vector<KernelInfo>> kernels = collectKernels(module);
  if (failed(kernels))
    return failure();
  // The runtime trusts the metadata's chip; it must be the one compiled for
  // (the module's fp8.target, which the pipeline attached).
  StringRef target = lookupTarget(module).getChip();
  bool wrongChip = false;
  for (const KernelInfo &kernel : *kernels) {
    StringRef chip = kernel.fields.chip;
    if (!chip.empty() && chip != target) {
      emitError(kernel.loc) << "kernel @" << kernel.name << " is for \""
                            << chip << "\" but the module is compiled for "
                            << target;
      wrongChip = true;
    }
  }
  if (wrongChip)
    return failure();
  if (kernels->empty()) {
    InFlightDiagnostic diag = module.emitError() << "nothing to compile: ";
    if (numInputOps == 0)
      diag << "the input has no fp8 op and no gpu.module kernel (fp8-compile "
              "compiles fp8.linear, fp8.scaled_matmul, fp8.quantize, ... "
              "ops; see docs/contract.md)";
    else
      diag << "no result of the input's " << numInputOps
           << " fp8 op(s) is used (returned or stored), so canonicalization "
              "removed them all: return what they compute";
    return diag;
  }

  // Kernel name -> its JSON document. Converted before code generation so
  // that metadata errors come first.
  llvm::StringMap<std::string> jsonDocuments;
  for (const KernelInfo &kernel : *kernels) {
    FailureOr<llvm::json::Value> json =
        buildKernelJSON(kernel, kernel.name + ".ptx");
    if (failed(json))
      return failure();
    llvm::raw_string_ostream os(jsonDocuments[kernel.name]);
    llvm::json::OStream(os, kJSONIndent).value(*json);
    os << "\n";
  }

  SmallVector<KernelModule> units;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
    KernelModule unit{gpuModule, {}, {}};
    for (const KernelInfo &kernel : *kernels)
      if (kernel.moduleName == gpuModule.getName())
        unit.kernels.push_back(&kernel);
    // A module without kernels (device functions only) has nothing to run.
    if (!unit.kernels.empty())
      units.push_back(std::move(unit));
  }
  {
    TimingScope codegenTimer = rootTimer.nest("generate PTX");
    if (failed(generatePTX(module, units, options, config, codegenTimer)))
      return failure();
  }

  CompiledModule compiled;
  for (const KernelModule &unit : units)
    for (const KernelInfo *kernel : unit.kernels)
      compiled.kernels.push_back(
          {kernel->name, unit.ptx, jsonDocuments[kernel->name]});
  llvm::raw_string_ostream os(compiled.programJSON);
  llvm::json::OStream(os, kJSONIndent).value(*program);
  os << "\n";
  return compiled;
}

/// "file:line:col" for file locations (also inside name and call-site
/// locations), the printed location otherwise.
static std::string formatLocation(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>())
    os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine() << ":"
       << fileLoc.getColumn();
  else
    os << loc;
  return text;
}

struct DiagnosticCollector::Impl {
  Impl(MLIRContext &context, llvm::SourceMgr *sourceMgr)
      : printedStream(printed),
        printer(sourceMgr ? *sourceMgr : ownSourceMgr, &context,
                printedStream),
        // Registered after `printer`, so it runs first, and stops there.
        recorder(&context, [this](Diagnostic &diag) {
          printed.clear();
          printer.emitDiagnostic(diag.getLocation(), diag.str(),
                                 diag.getSeverity());
          for (Diagnostic &note : diag.getNotes())
            printer.emitDiagnostic(note.getLocation(), note.str(),
                                   note.getSeverity());
          records.push_back({diag.getSeverity(),
                             formatLocation(diag.getLocation()), diag.str(),
                             printed});
          return success();
        }) {}

  SmallVector<DiagnosticRecord> records;
  /// Without a given source manager, locations print without source lines.
  llvm::SourceMgr ownSourceMgr;
  std::string printed;
  llvm::raw_string_ostream printedStream;
  /// Prints one diagnostic, with its notes and source line, into `printed`.
  SourceMgrDiagnosticHandler printer;
  ScopedDiagnosticHandler recorder;
};

DiagnosticCollector::DiagnosticCollector(MLIRContext &context,
                                         llvm::SourceMgr *sourceMgr)
    : impl(std::make_unique<Impl>(context, sourceMgr)) {}

DiagnosticCollector::~DiagnosticCollector() = default;

SmallVector<DiagnosticRecord> DiagnosticCollector::takeDiagnostics() {
  return std::exchange(impl->records, {});
}

CompileResult mlir::fp8::compileSourceToPTX(MLIRContext &context,
                                            StringRef source,
                                            StringRef sourceName,
                                            const FP8ToPTXOptions &options) {
  CompileResult result;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, sourceName), llvm::SMLoc());
  DiagnosticCollector collector(context, &sourceMgr);
  // The op in generic form after each diagnostic is noise for a user.
  bool printOp = context.shouldPrintOpOnDiagnostic();
  context.printOpOnDiagnostic(false);

  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (module) {
    FailureOr<CompiledModule> compiled = compileToPTX(*module, options);
    if (succeeded(compiled)) {
      result.succeeded = true;
      result.kernels = std::move(compiled->kernels);
      result.programJSON = std::move(compiled->programJSON);
    }
  }
  context.printOpOnDiagnostic(printOp);
  result.diagnostics = collector.takeDiagnostics();
  return result;
}

//===- LowerScaledMatmul.cpp - fp8.scaled_matmul to GPU kernels -----------===//
//
// Builds one kernel per distinct GEMM (N, K, recipe, tiling) into the
// `gpu.module @fp8_kernels` and replaces each op by a call of a host launcher
// declaration that names its kernel (`fp8.kernel`). The launcher is what the
// host runtime provides: it encodes the tensor maps from the kernel metadata
// and launches on the caller's stream.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToBlackwell/BlackwellGemm.h"
#include "FP8/Conversion/FP8ToHopper/HopperGemm.h"
#include "FP8/Conversion/Passes.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Target/Chip.h"
#include "GemmPlan.h"
#include "KernelModule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8LOWERSCALEDMATMUL
#include "FP8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
struct LowerScaledMatmulPass
    : public fp8::impl::FP8LowerScaledMatmulBase<LowerScaledMatmulPass> {
  using FP8LowerScaledMatmulBase::FP8LowerScaledMatmulBase;

  void runOnOperation() override;

private:
  LogicalResult lower(ScaledMatmulOp op, const ChipInfo &chip,
                      gpu::GPUModuleOp kernels);
};
} // namespace

// Each target builder returns the kernel's name, building it into `kernels`
// (with its metadata) when it is not there yet.

/// sm_90a: wgmma kernels (lib/Conversion/FP8ToHopper).
static FailureOr<std::string> buildHopperKernel(ScaledMatmulOp op,
                                                const ChipInfo &chip,
                                                const GemmKernelPlan &plan,
                                                gpu::GPUModuleOp kernels) {
  const GemmProblem *problem = &plan.gemm.problem;
  const GemmTiling *tiling = &plan.tiling;
  std::string name = getGemmKernelName(*problem, *tiling);
  if (kernels.lookupSymbol(name))
    return name;
  OpBuilder builder(op);
  MLIRContext *ctx = op.getContext();
  // Builds the kernel of `t` with its metadata plus `extra` entries; the
  // grid rule carries the tile's throughput for the runtime's choice among
  // launch variants.
  auto build = [&](StringRef kernelName, const GemmTiling &t,
                   ArrayRef<NamedAttribute> extra) {
    gpu::GPUFuncOp kernel = hopper::buildGemmKernel(
        builder, op.getLoc(), kernels, kernelName, *problem, t);
    DictionaryAttr metadata = buildGemmKernelMetadata(
        ctx, kernelName, chip, *problem, t,
        hopper::getDynamicSharedMemoryBytes(t));
    NamedAttrList grid(cast<DictionaryAttr>(metadata.get("grid")));
    grid.set("throughput",
             builder.getI64IntegerAttr(hopper::getTileThroughput(*problem, t)));
    NamedAttrList entries(metadata);
    entries.set("grid", grid.getDictionary(ctx));
    for (NamedAttribute entry : extra)
      entries.set(entry.getName(), entry.getValue());
    kernel->setAttr(kKernelMetadataAttrName, entries.getDictionary(ctx));
    kernel->setAttr(kGridConstantArgsAttrName,
                    builder.getDenseI32ArrayAttr(getGridConstantParams(t)));
  };
  // Launch variants (dynamic M): own kernels, named by their tiling, that
  // the primary's metadata lists by metadata file; the runtime picks one per
  // launch from M.
  SmallVector<GemmTiling> variants =
      hopper::selectLaunchVariants(*problem, *tiling, op.getConfigAttr());
  SmallVector<Attribute> variantFiles;
  for (const GemmTiling &t : variants)
    variantFiles.push_back(
        builder.getStringAttr(getGemmKernelName(*problem, t) + ".json"));
  SmallVector<NamedAttribute> extra;
  if (!variantFiles.empty())
    extra.push_back(builder.getNamedAttr("variants",
                                         builder.getArrayAttr(variantFiles)));
  build(name, *tiling, extra);
  for (const GemmTiling &t : variants) {
    std::string variant = getGemmKernelName(*problem, t);
    if (!kernels.lookupSymbol(variant))
      build(variant, t,
            {builder.getNamedAttr("variant_of", builder.getStringAttr(name))});
  }
  return name;
}

/// sm_100a: tcgen05 kernels (lib/Conversion/FP8ToBlackwell).
static FailureOr<std::string> buildBlackwellKernel(ScaledMatmulOp op,
                                                   const ChipInfo &chip,
                                                   const GemmKernelPlan &plan,
                                                   gpu::GPUModuleOp kernels) {
  const blackwell::BlackwellGemm *gemm = &plan.gemm;
  const GemmTiling *tiling = &plan.tiling;
  std::string name = blackwell::getKernelName(*gemm, *tiling);
  if (!kernels.lookupSymbol(name)) {
    OpBuilder builder(op);
    gpu::GPUFuncOp kernel = blackwell::buildGemmKernel(
        builder, op.getLoc(), kernels, name, *gemm, *tiling);
    kernel->setAttr(kKernelMetadataAttrName,
                    blackwell::buildKernelMetadata(op.getContext(), name, chip,
                                                   *gemm, *tiling));
    kernel->setAttr(kGridConstantArgsAttrName,
                    builder.getDenseI32ArrayAttr(getGridConstantParams(*tiling)));
  }
  return name;
}

LogicalResult LowerScaledMatmulPass::lower(ScaledMatmulOp op,
                                           const ChipInfo &chip,
                                           gpu::GPUModuleOp kernels) {
  FailureOr<GemmKernelPlan> plan = planGemmKernel(op, chip);
  if (failed(plan))
    return failure();
  FailureOr<std::string> built =
      chip.architecture == Architecture::Blackwell
          ? buildBlackwellKernel(op, chip, *plan, kernels)
          : buildHopperKernel(op, chip, *plan, kernels);
  if (failed(built))
    return failure();
  std::string name = *built;
  OpBuilder builder(op);

  // Host side: a call of the launcher declared for this kernel. On tensors
  // it returns D; on memrefs (bufferized form) it writes the `outs` buffer.
  ModuleOp module = getOperation();
  std::string launcherName =
      name + (op.hasBufferSemantics() ? "_launch_into" : "_launch");
  // The launcher only reads its inputs; it writes only the `outs` buffers
  // (D and the amax).
  SmallVector<bool> written(op->getNumOperands(), false);
  for (OpOperand &operand : op->getOpOperands())
    written[operand.getOperandNumber()] =
        operand.get() == op.getOut() || operand.get() == op.getAmaxOut();
  func::FuncOp launcher = getOrCreateLauncher(
      module, op, kernels, name, launcherName,
      builder.getFunctionType(op->getOperandTypes(), op->getResultTypes()),
      written);
  if (!launcher)
    return failure();
  auto call = func::CallOp::create(builder, op.getLoc(), launcher,
                                   op->getOperands());
  op->replaceAllUsesWith(call.getResults());
  op.erase();
  return success();
}

void LowerScaledMatmulPass::runOnOperation() {
  const ChipInfo *info = lookupChip(chip);
  if (!info) {
    getOperation().emitError() << "unknown chip '" << chip
                               << "': expected one of "
                               << describeSupportedChips();
    return signalPassFailure();
  }
  SmallVector<ScaledMatmulOp> ops;
  getOperation().walk([&](ScaledMatmulOp op) { ops.push_back(op); });
  if (ops.empty())
    return;
  gpu::GPUModuleOp kernels = getOrCreateKernelModule(getOperation());
  bool failedAny = false;
  for (ScaledMatmulOp op : ops)
    failedAny |= failed(lower(op, *info, kernels));
  if (failedAny)
    signalPassFailure();
}

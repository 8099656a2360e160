//===- Pipelines.cpp - fp8-to-ptx and fp8-gpu-module-to-ptx ---------------===//

#include "FP8/Conversion/Passes.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"
#include "FP8/Target/PTX/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::fp8;

/// `gpu-module-to-binary` format that keeps the PTX text (no ptxas run).
static constexpr llvm::StringLiteral kBinaryFormatPTX = "isa";

/// The module's fp8.target from the `chip` and `sm-count` options (or the
/// one it has): the only pass that reads the chip name.
static void addAttachTarget(OpPassManager &pm,
                            const FP8ToPTXOptions &options) {
  FP8AttachTargetOptions attach;
  attach.chip = options.chip;
  attach.smCount = options.smCount;
  pm.addPass(createFP8AttachTarget(attach));
}

void mlir::fp8::buildFP8ToGPUPipeline(OpPassManager &pm,
                                      const FP8ToPTXOptions &options) {
  // Every pass below reads the chip from the module.
  addAttachTarget(pm, options);
  // Linear layers into the chip's quantizations and GEMMs; Q/DQ graphs into
  // scaled_matmul (before the majors are chosen).
  pm.addPass(createFP8ExpandLinear());
  // Quantizations of inputs annotated as split over a device grid (what
  // fp8-shard-linear writes) shard by shard, with their FP8 all-gathers;
  // nothing else changes.
  pm.addPass(createFP8ShardQuantize());
  pm.addPass(createFP8FuseScales());
  // Defaults for the GEMMs that name no recipe or configuration, those the
  // two passes above made included.
  if (!options.defaultRecipe.empty() || !options.gemmConfig.empty())
    pm.addPass(createFP8SetGemmDefaults(
        FP8SetGemmDefaultsOptions{options.defaultRecipe, options.gemmConfig}));
  // Legal operand majors for the chip (flipping quantize outputs), then
  // fp8-verify-target's checks, before anything is lowered.
  pm.addPass(createFP8SelectLayouts());
  // Blockwise GEMMs run on the block-scaled MMA where there is one (on other
  // chips the pass changes nothing).
  pm.addPass(createFP8BlockwiseToMX());
  pm.addPass(createCanonicalizerPass());
  // Training steps marked fp8.split_backward as a forward and a backward
  // function, once both phases' quantizations and GEMMs are chosen together.
  pm.addPass(createFP8SplitTrainingStep());
  // Every GEMM, then (per-tensor current scaling decomposed into amax +
  // compute_scale + cast) every quantization op, as a kernel launch on
  // tensors (fp8.launch, destination-passing style); a quantization that no
  // kernel takes is an error.
  pm.addPass(createFP8LowerScaledMatmul());
  pm.addPass(createFP8DecomposeQuantize());
  FP8LowerQuantizeOptions quantize;
  quantize.strict = true;
  pm.addPass(createFP8LowerQuantize(quantize));
  // The collectives of the shard dialect (fp8-shard-quantize's amax
  // all-reduces and FP8 all-gathers) as launches of collective
  // declarations, which the host program writes as collective steps.
  pm.addPass(createFP8LowerCollectives());
  // Upstream one-shot bufferization, with dense row-major buffers at function
  // boundaries (what the kernels take): each launch becomes a call of its
  // launcher on buffers, its outputs new allocations (zero-filled where the
  // kernel accumulates) or, for state updated in place, the input's buffer.
  // Ops with no bufferization model stay on tensors behind casts (the host
  // program then rejects them).
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.allowUnknownOps = true;
  // Tensors are dense: their buffers get the identity layout, the only one
  // the kernels read (fp8.scaled_matmul rejects strided memrefs).
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.unknownTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Host functions only (the kernels are built): sizes read off the
  // allocations that carry them, one constant of each value.
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
}

/// fp8-gpu-module-to-ptx after fp8-attach-target.
static void addGPUModuleToPTXPasses(OpPassManager &pm,
                                    const FP8ToPTXOptions &options) {
  // Check the chip, features and NVVM ops before anything else: here the
  // PTX-builder ops (wgmma.mma_async, mbarrier.try_wait.parity) are still
  // NVVM ops, not yet inline assembly.
  pm.addNestedPass<gpu::GPUModuleOp>(createFP8VerifyTargetSupport());

  // #nvvm.target<O, chip, features> of the module's fp8.target.
  FP8AttachNVVMTargetOptions attach;
  attach.optLevel = options.optLevel;
  pm.addPass(createFP8AttachNVVMTarget(attach));

  // Device lowering, nested so that host functions (tensors, launch_func)
  // are never touched: the runtime launches the kernels from the JSON.
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createSCFToControlFlowPass());
  // Also lowers arith, cf, index, func and memref (ConvertToLLVM interfaces).
  device.addPass(createConvertGpuOpsToNVVMOps());
  // wgmma.mma_async, mbarrier.try_wait.parity, ... have no LLVM intrinsic:
  // they become inline PTX here.
  device.addPass(createConvertNVVMToLLVMPass());
  device.addPass(createArithToLLVMConversionPass());
  device.addPass(createConvertIndexToLLVMPass());
  device.addPass(createReconcileUnrealizedCastsPass());
  // After convert-gpu-to-nvvm, which drops gpu.func argument attributes.
  device.addPass(createFP8FinalizeKernelABI());
  // The last check before LLVM: the attached #nvvm.target and the NVVM ops
  // the lowerings above produced.
  device.addPass(createFP8VerifyTargetSupport());

  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = kBinaryFormatPTX.str();
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
}

void mlir::fp8::buildFP8GPUModuleToPTXPipeline(OpPassManager &pm,
                                               const FP8ToPTXOptions &options) {
  addAttachTarget(pm, options);
  addGPUModuleToPTXPasses(pm, options);
}

void mlir::fp8::buildFP8ToPTXPipeline(OpPassManager &pm,
                                      const FP8ToPTXOptions &options) {
  buildFP8ToGPUPipeline(pm, options);
  addGPUModuleToPTXPasses(pm, options);
}

void mlir::fp8::registerFP8ToPTXPipelines() {
  PassPipelineRegistration<FP8ToPTXOptions>(
      "fp8-to-ptx",
      "Compile fp8 ops to PTX: fp8-attach-target{chip sm-count}, "
      "fp8-expand-linear, fp8-fuse-scales, "
      "fp8-set-gemm-defaults (with default-recipe or gemm-config), "
      "fp8-select-layouts (with fp8-verify-target's checks), "
      "fp8-blockwise-to-mx, canonicalize, fp8-split-training-step, "
      "fp8-lower-scaled-matmul, "
      "fp8-decompose-quantize, fp8-lower-quantize{strict}, one-shot-bufferize "
      "(identity layouts at function boundaries), canonicalize and cse of "
      "the host functions, then fp8-gpu-module-to-ptx. Each gpu.module "
      "becomes a gpu.binary whose #gpu.object holds the PTX text; host code "
      "is left as is (the runtime launches the kernels from their metadata)",
      buildFP8ToPTXPipeline);
  PassPipelineRegistration<FP8ToPTXOptions>(
      "fp8-gpu-module-to-ptx",
      "Compile lowered kernel gpu.modules to PTX: "
      "fp8-attach-target{chip sm-count}, fp8-verify-target-support, "
      "fp8-attach-nvvm-target{opt-level}, "
      "in each gpu.module convert-scf-to-cf, convert-gpu-to-nvvm, "
      "convert-nvvm-to-llvm, convert-arith-to-llvm, convert-index-to-llvm, "
      "reconcile-unrealized-casts, fp8-finalize-kernel-abi, "
      "fp8-verify-target-support, then gpu-module-to-binary{format=isa}",
      buildFP8GPUModuleToPTXPipeline);
}

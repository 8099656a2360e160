//===- Passes.h - PTX emission passes and pipelines -------------*- C++ -*-===//
//
// From the kernels of the fp8 lowerings to PTX text in `gpu.binary` ops.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TARGET_PTX_PASSES_H
#define FP8_TARGET_PTX_PASSES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace fp8 {

#define GEN_PASS_DECL
#include "FP8/Target/PTX/Passes.h.inc"

/// Function attribute set by the lowerings on a kernel: the indices of the
/// parameters that are 128-byte CUtensorMaps passed by value.
inline constexpr llvm::StringLiteral kGridConstantArgsAttrName =
    "fp8.grid_constant_args";
/// Function attribute set by the lowerings on a kernel: the dictionary that
/// `fp8-compile` writes out as the kernel's JSON metadata.
inline constexpr llvm::StringLiteral kKernelMetadataAttrName =
    "fp8.kernel_metadata";
/// Module attribute set by fp8-build-host-program: the dictionary that
/// `fp8-compile` writes out as DIR/module.json (schema/module.schema.json).
inline constexpr llvm::StringLiteral kHostProgramAttrName = "fp8.host_program";

/// Options of the `fp8-to-ptx` and `fp8-gpu-module-to-ptx` pipelines.
struct FP8ToPTXOptions : public PassPipelineOptions<FP8ToPTXOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target GPU, one of the chips of FP8/Target/Chip.h "
                     "(sm_90a, sm_100a), attached as the module's fp8.target "
                     "(fp8-attach-target); empty: the fp8.target the module "
                     "already has"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> smCount{
      *this, "sm-count",
      llvm::cl::desc("SMs of the GPU, for the tile heuristic's waves "
                     "(default: the chip's, 132 on sm_90a, 148 on sm_100a)"),
      llvm::cl::init(0)};
  PassOptions::Option<unsigned> optLevel{
      *this, "opt-level",
      llvm::cl::desc("LLVM optimization level of the NVPTX code generation "
                     "(0 to 3)"),
      llvm::cl::init(3)};
  PassOptions::Option<std::string> defaultRecipe{
      *this, "default-recipe",
      llvm::cl::desc("Recipe attribute given to each fp8.scaled_matmul "
                     "without one (fp8-set-gemm-defaults)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> gemmConfig{
      *this, "gemm-config",
      llvm::cl::desc("#fp8.gemm_config given to each fp8.scaled_matmul "
                     "without one, overriding the tile heuristic "
                     "(fp8-set-gemm-defaults)"),
      llvm::cl::init("")};
};

/// Adds the target-neutral checks and the lowering of the fp8 ops to GPU
/// kernels: fp8-attach-target{chip, sm-count}, fp8-expand-linear,
/// fp8-fuse-scales, fp8-set-gemm-defaults{recipe, config} (only when
/// `defaultRecipe` or `gemmConfig` is set), fp8-select-layouts (which ends
/// with fp8-verify-target's checks), fp8-blockwise-to-mx (a rewrite only on
/// chips with a block-scaled MMA), canonicalize, one-shot-bufferize,
/// fp8-lower-scaled-matmul, fp8-decompose-quantize, fp8-lower-quantize;
/// every pass after the first reads the chip from the module's
/// `fp8.target`. The result holds host code with
/// `gpu.launch_func` ops and one `gpu.module` per kernel family whose
/// `gpu.func` kernels carry `fp8.kernel_metadata`.
void buildFP8ToGPUPipeline(OpPassManager &pm, const FP8ToPTXOptions &options);

/// Adds the passes that take already-lowered gpu.modules to PTX, on a
/// builtin.module: fp8-attach-target{chip, sm-count} ->
/// fp8-verify-target-support -> fp8-attach-nvvm-target{O} (the chip and
/// features of the module's fp8.target) -> in each gpu.module:
/// convert-scf-to-cf, convert-gpu-to-nvvm, convert-nvvm-to-llvm,
/// convert-arith-to-llvm, convert-index-to-llvm, reconcile-unrealized-casts,
/// fp8-finalize-kernel-abi, fp8-verify-target-support -> gpu-module-to-binary
/// {format=isa}. Host code is left untouched: every lowering runs nested in
/// the gpu.modules.
void buildFP8GPUModuleToPTXPipeline(OpPassManager &pm,
                                    const FP8ToPTXOptions &options);

/// The whole compilation: buildFP8ToGPUPipeline then the passes of
/// buildFP8GPUModuleToPTXPipeline after its fp8-attach-target. Each `gpu.module` becomes a `gpu.binary`
/// with one `#gpu.object<#nvvm.target<...>, assembly = "PTX">`.
void buildFP8ToPTXPipeline(OpPassManager &pm, const FP8ToPTXOptions &options);

/// Registers the `fp8-to-ptx` and `fp8-gpu-module-to-ptx` pipelines.
void registerFP8ToPTXPipelines();

#define GEN_PASS_REGISTRATION
#include "FP8/Target/PTX/Passes.h.inc"

} // namespace fp8
} // namespace mlir

#endif // FP8_TARGET_PTX_PASSES_H

//===- Passes.td - FP8 lowering passes ---------------------*- tablegen -*-===//

#ifndef FP8_CONVERSION_PASSES_TD
#define FP8_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP8LowerScaledMatmul : Pass<"fp8-lower-scaled-matmul", "ModuleOp"> {
  let summary = "Lower fp8.scaled_matmul to GPU kernels for a target chip";
  let description = [{
    Replaces each `fp8.scaled_matmul` by a kernel in a `gpu.module` (one
    kernel per N, K, recipe and tile configuration; M is a run-time value)
    and a `gpu.launch_func` of it. The kernel is built from upstream GPU,
    NVVM, SCF, arith and LLVM ops by the shared GEMM skeleton (persistent
    tile scheduler, TMA + mbarrier producer/consumer pipeline, epilogue) and
    the target's MMA emitter (`wgmma` on sm_90a).

    Each kernel `gpu.func` carries:
    * `fp8.kernel_metadata`: a dictionary describing the launch (block and
      cluster dims, grid rule, dynamic shared memory, operands, parameters
      and the TMA tensor maps the host encodes), written out as JSON by
      `fp8-compile`;
    * `fp8.grid_constant_args`: indices of the parameters that are 128-byte
      `CUtensorMap`s passed by value (`fp8-finalize-kernel-abi` marks them
      `byval` + `nvvm.grid_constant` after `convert-gpu-to-nvvm`, which drops
      argument attributes).

    The kernel configuration comes from `#fp8.gemm_config` on the op when
    present, otherwise from the documented heuristic. Unsupported
    combinations (run `fp8-verify-target` first) are reported as errors.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "target GPU (sm_90a)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect"
  ];
}

#endif // FP8_CONVERSION_PASSES_TD

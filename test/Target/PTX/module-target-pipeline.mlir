// A module that carries its fp8.target compiles for it: fp8-to-ptx without
// a chip (or with the same one) lowers for the module's chip and attaches
// the NVVM target of its chip and PTX features; another chip is an error.
// RUN: fp8-opt %s --fp8-to-ptx | FileCheck %s
// RUN: fp8-opt %s --fp8-to-ptx=chip=sm_100a | FileCheck %s
// RUN: not fp8-opt %s --fp8-to-ptx=chip=sm_90a 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: not fp8-opt %s --fp8-gpu-module-to-ptx=chip=sm_90a 2>&1 | FileCheck %s --check-prefix=OTHER

// CHECK: module attributes {fp8.target = #fp8.target<chip = "sm_100a", sm_count = 148, max_shared_memory_per_block = 232448, ptx_features = "+ptx88">, gpu.container_module}
// CHECK: gpu.binary @fp8_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx88">, {{.*}}.target sm_100a{{.*}}tcgen05.mma
// OTHER: error: cannot attach chip 'sm_90a': the module is already compiled for #fp8.target<chip = "sm_100a", sm_count = 148, max_shared_memory_per_block = 232448, ptx_features = "+ptx88">
module attributes {fp8.target = #fp8.target<chip = "sm_100a", sm_count = 148, max_shared_memory_per_block = 232448, ptx_features = "+ptx88">} {
  func.func @gemm(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
    %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
    return %0 : tensor<128x256xbf16>
  }
}

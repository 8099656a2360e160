// The sm_90a heuristic plans with the module's target: 100000 bytes of
// shared memory per block hold 3 stages of the 64x128 tile, not the 8 of
// the chip's 232448 (target-limits.mlir: the same GEMM).
// RUN: fp8-opt %s -fp8-lower-scaled-matmul | FileCheck %s
// CHECK: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n2048_k1024_t64x128x128_s3_fast(
// CHECK-SAME: dynamic_shared_memory_bytes = 90160
module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 100000, ptx_features = "+ptx80">} {
  func.func @small_shared_memory(%a: tensor<512x1024xf8E4M3FN>, %b: tensor<2048x1024xf8E4M3FN>, %s: tensor<f32>) -> tensor<512x2048xbf16> {
    %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<512x1024xf8E4M3FN>, tensor<2048x1024xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<512x2048xbf16>
    return %0 : tensor<512x2048xbf16>
  }
}

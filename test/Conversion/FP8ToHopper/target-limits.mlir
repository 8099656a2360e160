// The sm_90a heuristic plans with the module's target: its SM count (the
// waves of the persistent grid) and its shared memory per block (the
// pipeline depth, target-shared-memory.mlir).
// RUN: fp8-opt %s -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul | FileCheck %s --check-prefix=SXM
// RUN: fp8-opt %s -fp8-attach-target="chip=sm_90a sm-count=114" -fp8-lower-scaled-matmul | FileCheck %s --check-prefix=PCIE

// 512x2048: 128 tiles of 64x128 are one wave on the 132 SMs of an H100
// SXM, two on the 114 of an H100 PCIe, where 64 tiles of 128x128 are
// faster.
// SXM: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n2048_k1024_t64x128x128_s8_fast(
// PCIE: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n2048_k1024_t128x128x128_s5_pp_fast(
func.func @waves(%a: tensor<512x1024xf8E4M3FN>, %b: tensor<2048x1024xf8E4M3FN>, %s: tensor<f32>) -> tensor<512x2048xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<512x1024xf8E4M3FN>, tensor<2048x1024xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<512x2048xbf16>
  return %0 : tensor<512x2048xbf16>
}

// The same tile with a bias keeps both consumers on each tile (ping-pong's
// 128 sums per thread beside the bias spilled).
// PCIE: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n2048_k1024_t128x128x128_s6_fast_bias(
func.func @waves_bias(%a: tensor<512x1024xf8E4M3FN>, %b: tensor<2048x1024xf8E4M3FN>, %s: tensor<f32>, %bias: tensor<2048xbf16>) -> tensor<512x2048xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s bias %bias {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<512x1024xf8E4M3FN>, tensor<2048x1024xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<2048xbf16>) -> tensor<512x2048xbf16>
  return %0 : tensor<512x2048xbf16>
}

// The GEMM kernels against the limits of the module's own #fp8.target
// (docs/contract.md, rows 0 and 20): a shared-memory limit too small for one
// pipeline stage is an error naming the attribute, on both chips; the
// target's SM count only steers the tile choice.
// RUN: fp8-opt %s -split-input-file -fp8-verify-target -verify-diagnostics

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 1, ptx_features = "+ptx80">} {
func.func @sm90_one_byte(%a: tensor<256x128xf8E4M3FN>, %b: tensor<128x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{not one pipeline stage of a 128x128 tile fits in the 1 bytes of shared memory of the target (max_shared_memory_per_block of #fp8.target): raise it or configure a smaller tile}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x128xf8E4M3FN>, tensor<128x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x128xbf16>
  return %0 : tensor<256x128xbf16>
}
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_100a", sm_count = 148, max_shared_memory_per_block = 1024, ptx_features = "+ptx88">} {
func.func @sm100_one_kib(%a: tensor<256x128xf8E4M3FN>, %b: tensor<128x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{not one pipeline stage of a 128x128 tile fits in the 1024 bytes of shared memory of the target (max_shared_memory_per_block of #fp8.target)}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x128xf8E4M3FN>, tensor<128x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x128xbf16>
  return %0 : tensor<256x128xbf16>
}
}

// -----

// 2^40 SMs: accepted (a cost-model input, no index).
module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 1099511627776, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
func.func @huge_sm_count(%a: tensor<256x128xf8E4M3FN>, %b: tensor<128x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<256x128xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x128xf8E4M3FN>, tensor<128x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x128xbf16>
  return %0 : tensor<256x128xbf16>
}
}

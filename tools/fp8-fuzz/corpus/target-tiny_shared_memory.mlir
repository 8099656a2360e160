module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 1, ptx_features = "+ptx80">} {
func.func @g(%a: tensor<256x128xf8E4M3FN>, %b: tensor<128x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<256x128xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x128xf8E4M3FN>, tensor<128x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x128xbf16>
  return %0 : tensor<256x128xbf16>
}
}

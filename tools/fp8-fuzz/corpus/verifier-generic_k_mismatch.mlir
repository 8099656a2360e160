func.func @generic_k_mismatch(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x512xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  %0 = "fp8.scaled_matmul"(%a, %b, %s, %s) <{a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}> : (tensor<128x256xf8E4M3FN>, tensor<64x512xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

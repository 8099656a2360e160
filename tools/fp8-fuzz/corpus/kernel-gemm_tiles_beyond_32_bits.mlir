func.func @gemm_tiles_beyond_32_bits(%a: tensor<2147483632x128xf8E4M3FN>, %b: tensor<2147483632x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<2147483632x2147483632xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<2147483632x128xf8E4M3FN>, tensor<2147483632x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<2147483632x2147483632xbf16>
  return %0 : tensor<2147483632x2147483632xbf16>
}

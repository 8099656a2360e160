func.func @gemm_all_zero(%a: tensor<0x0xf8E4M3FN>, %b: tensor<0x0xf8E4M3FN>, %s: tensor<f32>) -> tensor<0x0xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<0x0xf8E4M3FN>, tensor<0x0xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<0x0xbf16>
  return %0 : tensor<0x0xbf16>
}

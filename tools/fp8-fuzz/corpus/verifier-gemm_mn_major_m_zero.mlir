func.func @gemm_mn_major_m_zero(%a: tensor<128x0xf8E4M3FN>, %b: tensor<64x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<0x64xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, a_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<128x0xf8E4M3FN>, tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<0x64xbf16>
  return %0 : tensor<0x64xbf16>
}

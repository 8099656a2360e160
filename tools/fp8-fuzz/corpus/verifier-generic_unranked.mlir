func.func @generic_unranked(%a: tensor<*xf8E4M3FN>, %s: tensor<f32>) {
  %0 = "fp8.scaled_matmul"(%a, %a, %s, %s) {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<*xf8E4M3FN>, tensor<*xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return
}

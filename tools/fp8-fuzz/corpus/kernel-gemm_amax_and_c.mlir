func.func @gemm_amax_and_c(%a: tensor<128x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>, %s: tensor<f32>, %c: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %0, %amax = fp8.scaled_matmul %a, %b, %s, %s accumulate_into %c {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<128x128xf32>) -> (tensor<128x128xf32>, tensor<f32>)
  return %0 : tensor<128x128xf32>
}

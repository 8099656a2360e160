func.func @gemm_n_2pow40(%a: tensor<?x128xf8E4M3FN>, %b: tensor<1099511627776x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x1099511627776xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x128xf8E4M3FN>, tensor<1099511627776x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x1099511627776xbf16>
  return %0 : tensor<?x1099511627776xbf16>
}

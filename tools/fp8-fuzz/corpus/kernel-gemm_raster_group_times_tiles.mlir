func.func @gemm_raster_group_times_tiles(%a: tensor<?x128xf8E4M3FN>, %b: tensor<16777216x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x16777216xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x128x128, stages = 4, raster_group = 65535>} : (tensor<?x128xf8E4M3FN>, tensor<16777216x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x16777216xbf16>
  return %0 : tensor<?x16777216xbf16>
}

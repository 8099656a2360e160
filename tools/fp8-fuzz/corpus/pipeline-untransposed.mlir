func.func @untransposed(%a: tensor<128x200xf8E4M3FN>, %w: tensor<200x128xbf16>, %sa: tensor<f32>, %ws: tensor<f32>) -> tensor<128x128xbf16> {
  %wq, %wsi = fp8.quantize %w scale %ws {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>, columnwise_layout = #fp8.columnwise_layout<untransposed>} : tensor<200x128xbf16>, tensor<f32> -> columnwise(tensor<200x128xf8E4M3FN>, tensor<f32>)
  %0 = fp8.scaled_matmul %a, %wq, %sa, %wsi {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<128x200xf8E4M3FN>, tensor<200x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

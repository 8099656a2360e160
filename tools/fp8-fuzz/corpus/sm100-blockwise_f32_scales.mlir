func.func @blockwise_f32_scales(%a: tensor<128x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %sb: tensor<1x2xf32>) -> tensor<128x128xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<scales = f32>} : (tensor<128x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<1x2xf32>) -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

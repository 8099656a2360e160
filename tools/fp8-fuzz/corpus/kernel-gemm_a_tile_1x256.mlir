func.func @gemm_a_tile_1x256(%a: tensor<128x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>, %sa: tensor<128x1xf32>, %sb: tensor<1x1xf32>) -> tensor<128x128xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x256>, b_granularity = #fp8.granularity<tile 256x256>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<act = 1x256, weight = 256x256>} : (tensor<128x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<128x1xf32>, tensor<1x1xf32>) -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

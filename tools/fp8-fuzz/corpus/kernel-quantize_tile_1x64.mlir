func.func @quantize_tile_1x64(%x: tensor<128x256xbf16>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<act = 1x64, weight = 64x64, accumulate = promoted(64)>, granularity = #fp8.granularity<tile 1x64>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x4xf32>)
  return
}

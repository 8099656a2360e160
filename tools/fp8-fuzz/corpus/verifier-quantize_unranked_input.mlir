func.func @quantize_unranked_input(%x: tensor<*xbf16>) -> (tensor<128x256xf8E4M3FN>, tensor<128x2xf32>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<*xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf32>)
  return %q, %s : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>
}

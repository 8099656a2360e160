func.func @dequantize_unranked_scale(%q: tensor<128x256xf8E4M3FN>, %s: tensor<*xf32>) -> tensor<128x256xbf16> {
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xf8E4M3FN>, tensor<*xf32> -> tensor<128x256xbf16>
  return %y : tensor<128x256xbf16>
}

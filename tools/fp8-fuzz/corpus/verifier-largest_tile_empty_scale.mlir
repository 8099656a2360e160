func.func @largest_tile_empty_scale(%q: tensor<128x256xf8E4M3FN>, %s: tensor<1x0xf32>) -> tensor<128x256xbf16> {
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 2147483647x2147483647>} : tensor<128x256xf8E4M3FN>, tensor<1x0xf32> -> tensor<128x256xbf16>
  return %y : tensor<128x256xbf16>
}

func.func @tile_beyond_extents(%q: tensor<128x256xf8E4M3FN>, %s: tensor<1x1xf32>) -> tensor<128x256xbf16> {
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 4611686018427387904x9223372036854775807>} : tensor<128x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x256xbf16>
  return %y : tensor<128x256xbf16>
}

func.func @dequantize_c_zero(%q: tensor<128x0xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x0xbf16> {
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tensor>} : tensor<128x0xf8E4M3FN>, tensor<f32> -> tensor<128x0xbf16>
  return %y : tensor<128x0xbf16>
}

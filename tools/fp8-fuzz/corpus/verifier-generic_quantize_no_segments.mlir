func.func @generic_quantize_no_segments(%x: tensor<128x256xbf16>) -> tensor<128x256xf8E4M3FN> {
  %q = "fp8.quantize"(%x) {recipe = #fp8.current<>, granularity = #fp8.granularity<row>} : (tensor<128x256xbf16>) -> tensor<128x256xf8E4M3FN>
  return %q : tensor<128x256xf8E4M3FN>
}

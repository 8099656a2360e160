func.func @largest_extent_scales(%x: tensor<16x2147483647xbf16>) -> (tensor<16x2147483647xf8E4M3FN>, tensor<16x16777216xf32>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<16x2147483647xbf16> -> rowwise(tensor<16x2147483647xf8E4M3FN>, tensor<16x16777216xf32>)
  return %q, %s : tensor<16x2147483647xf8E4M3FN>, tensor<16x16777216xf32>
}

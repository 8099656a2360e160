func.func @quantize_r_zero(%x: tensor<0x256xbf16>) -> (tensor<0x256xf8E4M3FN>, tensor<0x2xf32>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<0x256xbf16> -> rowwise(tensor<0x256xf8E4M3FN>, tensor<0x2xf32>)
  return %q, %s : tensor<0x256xf8E4M3FN>, tensor<0x2xf32>
}

func.func @quantize_c_200(%x: tensor<128x200xbf16>) -> (tensor<128x200xf8E4M3FN>, tensor<128x2xf32>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x200xbf16> -> rowwise(tensor<128x200xf8E4M3FN>, tensor<128x2xf32>)
  return %q, %s : tensor<128x200xf8E4M3FN>, tensor<128x2xf32>
}

func.func @quantize_too_many_elements(%x: tensor<65536x65536xbf16>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<65536x65536xbf16> -> rowwise(tensor<65536x65536xf8E4M3FN>, tensor<65536x512xf32>)
  return
}

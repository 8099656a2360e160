func.func @quantize_transposed_r_120(%x: tensor<120x256xbf16>) -> (tensor<256x120xf8E4M3FN>, tensor<256x1xf32>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<120x256xbf16> -> columnwise(tensor<256x120xf8E4M3FN>, tensor<256x1xf32>)
  return %q, %s : tensor<256x120xf8E4M3FN>, tensor<256x1xf32>
}

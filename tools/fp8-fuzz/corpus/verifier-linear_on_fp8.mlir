func.func @linear_on_fp8(%x: tensor<64x256xbf16>, %w: tensor<128x256xf8E4M3FN>) -> tensor<64x128xbf16> {
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<64x256xbf16>, tensor<128x256xf8E4M3FN>) -> tensor<64x128xbf16>
  return %y : tensor<64x128xbf16>
}

func.func @linear_unranked_weight(%x: tensor<64x256xbf16>, %w: tensor<*xbf16>) -> tensor<64x128xbf16> {
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<64x256xbf16>, tensor<*xbf16>) -> tensor<64x128xbf16>
  return %y : tensor<64x128xbf16>
}

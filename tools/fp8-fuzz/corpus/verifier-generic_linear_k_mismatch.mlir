func.func @generic_linear_k_mismatch(%x: tensor<64x256xbf16>, %w: tensor<128x512xbf16>) {
  %y = "fp8.linear"(%x, %w) {recipe = #fp8.current<>} : (tensor<64x256xbf16>, tensor<128x512xbf16>) -> tensor<64x128xbf16>
  return
}

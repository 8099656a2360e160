func.func @linear_backward_n_2pow31(%x: tensor<64x256xbf16>, %w: tensor<2147483648x256xbf16>, %dy: tensor<64x2147483648xbf16>) {
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>} : (tensor<64x256xbf16>, tensor<2147483648x256xbf16>, tensor<64x2147483648xbf16>) -> (tensor<64x256xbf16>, tensor<2147483648x256xf32>)
  return
}

func.func @linear_backward_unranked_dy(%x: tensor<64x256xbf16>, %w: tensor<128x256xbf16>, %dy: tensor<*xbf16>) {
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>} : (tensor<64x256xbf16>, tensor<128x256xbf16>, tensor<*xbf16>) -> (tensor<64x256xbf16>, tensor<128x256xf32>)
  return
}

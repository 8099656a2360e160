func.func @backward(%x: tensor<100x1024xbf16>, %w: tensor<2048x1024xbf16>, %dy: tensor<100x2048xbf16>) -> (tensor<100x1024xbf16>, tensor<2048x1024xf32>) {
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>} : (tensor<100x1024xbf16>, tensor<2048x1024xbf16>, tensor<100x2048xbf16>) -> (tensor<100x1024xbf16>, tensor<2048x1024xf32>)
  return %dx, %dw : tensor<100x1024xbf16>, tensor<2048x1024xf32>
}

func.func @linear_backward_dynamic_tokens(%x: tensor<?x1024xbf16>, %w: tensor<2048x1024xbf16>, %dy: tensor<?x2048xbf16>) -> (tensor<?x1024xbf16>, tensor<2048x1024xf32>) {
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.blockwise<>} : (tensor<?x1024xbf16>, tensor<2048x1024xbf16>, tensor<?x2048xbf16>) -> (tensor<?x1024xbf16>, tensor<2048x1024xf32>)
  return %dx, %dw : tensor<?x1024xbf16>, tensor<2048x1024xf32>
}

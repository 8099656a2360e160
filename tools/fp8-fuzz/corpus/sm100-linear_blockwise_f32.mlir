func.func @linear_blockwise_f32(%x: tensor<?x1024xbf16>, %w: tensor<2048x1024xbf16>) -> tensor<?x2048xbf16> {
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<scales = f32>} : (tensor<?x1024xbf16>, tensor<2048x1024xbf16>) -> tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}

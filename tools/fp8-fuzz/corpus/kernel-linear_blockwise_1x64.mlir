func.func @linear_blockwise_1x64(%x: tensor<?x1024xbf16>, %w: tensor<2048x1024xbf16>) -> tensor<?x2048xbf16> {
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<act = 1x64, weight = 64x64, accumulate = promoted(64)>} : (tensor<?x1024xbf16>, tensor<2048x1024xbf16>) -> tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}

func.func @linear_k_100(%x: tensor<?x100xbf16>, %w: tensor<2048x100xbf16>) -> tensor<?x2048xbf16> {
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<?x100xbf16>, tensor<2048x100xbf16>) -> tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}

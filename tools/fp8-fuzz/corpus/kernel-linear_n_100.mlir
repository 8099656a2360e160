func.func @linear_n_100(%x: tensor<?x1024xbf16>, %w: tensor<100x1024xbf16>) -> tensor<?x100xbf16> {
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>} : (tensor<?x1024xbf16>, tensor<100x1024xbf16>) -> tensor<?x100xbf16>
  return %y : tensor<?x100xbf16>
}

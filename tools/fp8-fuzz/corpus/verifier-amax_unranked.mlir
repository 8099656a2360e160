func.func @amax_unranked(%x: tensor<*xbf16>) -> tensor<f32> {
  %0 = fp8.amax %x : tensor<*xbf16> -> tensor<f32>
  return %0 : tensor<f32>
}

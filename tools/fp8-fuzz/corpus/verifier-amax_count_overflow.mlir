func.func @amax_count_overflow(%x: tensor<2147483647x2147483647x2147483647xbf16>) -> tensor<f32> {
  %0 = fp8.amax %x : tensor<2147483647x2147483647x2147483647xbf16> -> tensor<f32>
  return %0 : tensor<f32>
}

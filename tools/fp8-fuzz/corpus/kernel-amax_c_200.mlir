func.func @amax_c_200(%x: tensor<128x200xbf16>) -> tensor<f32> {
  %0 = fp8.amax %x : tensor<128x200xbf16> -> tensor<f32>
  return %0 : tensor<f32>
}

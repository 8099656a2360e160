func.func @encoded_input(%x: tensor<128x256xbf16, "blocked">) -> tensor<f32> {
  %0 = fp8.amax %x : tensor<128x256xbf16, "blocked"> -> tensor<f32>
  return %0 : tensor<f32>
}

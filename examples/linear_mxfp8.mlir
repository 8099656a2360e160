// Recipe: #fp8.mxfp8<block = 32, rounding = round_up, format = e4m3>
// Chips: sm_100a
//
// One training step of a linear layer under MXFP8 (Transformer Engine
// MXFP8BlockScaling) on Blackwell. Every tensor is quantized in 1x32 blocks
// along both directions (rowwise for the GEMMs that reduce over its last
// dimension, columnwise for the others), untransposed: seed 000, 3.3:
//   fprop Y  = W[1x32] @ X[1x32]    TN
//   dgrad dX = W[32x1] @ dY[1x32]   NN
//   wgrad dW = X[32x1] @ dY[32x1]   NT
// sm_90a has no block-scaled MMA: fp8-expand-linear rejects the recipe there.
func.func @linear_step_mxfp8(
    %x: tensor<8192x2048xbf16> {fp8.name = "x"},
    %w: tensor<4096x2048xbf16> {fp8.name = "w"},
    %dy: tensor<8192x4096xbf16> {fp8.name = "dy"})
    -> (tensor<8192x4096xbf16> {fp8.name = "y"},
        tensor<8192x2048xbf16> {fp8.name = "dx"},
        tensor<4096x2048xf32> {fp8.name = "dw"}) {
  %y = fp8.linear %x, %w {recipe = #fp8.mxfp8<>}
      : (tensor<8192x2048xbf16>, tensor<4096x2048xbf16>) -> tensor<8192x4096xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.mxfp8<>}
      : (tensor<8192x2048xbf16>, tensor<4096x2048xbf16>, tensor<8192x4096xbf16>)
      -> (tensor<8192x2048xbf16>, tensor<4096x2048xf32>)
  return %y, %dx, %dw
      : tensor<8192x4096xbf16>, tensor<8192x2048xbf16>, tensor<4096x2048xf32>
}

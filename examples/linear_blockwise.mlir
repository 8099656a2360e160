// Recipe: #fp8.blockwise<act = 1x128, weight = 128x128, scales = pow2, amax_clamp = 1.0e-4>
// Chips: sm_90a sm_100a
//
// One training step of a linear layer under DeepSeek-V3 blockwise scaling
// (Transformer Engine Float8BlockScaling): X and dY in 1x128 tiles, W in
// 128x128 tiles, f32 promotion every 128 K. Seed 000, 3.2:
//   fprop Y  = W[128x128]   @ X[1x128]     (1D x 2D)
//   dgrad dX = W^T[128x128] @ dY[1x128]    (1D x 2D)
//   wgrad dW = X^T[1x128]   @ dY^T[1x128]  (1D x 1D, f32 into main_grad)
// On sm_90a every GEMM is TN: X, W and dY are quantized with rowwise and
// transposed columnwise outputs in one read each. On sm_100a the weight is
// quantized once (its 2-D tiles make both directions the same data), X and
// dY twice (1-D tiles), untransposed, and fp8-blockwise-to-mx runs the GEMMs
// on the block-scaled MXFP8 MMA (each 1x128 scale repeated over four 1x32
// blocks), as Transformer Engine does on Blackwell.
func.func @linear_step_blockwise(
    %x: tensor<4096x7168xbf16> {fp8.name = "x"},
    %w: tensor<2112x7168xbf16> {fp8.name = "w"},
    %dy: tensor<4096x2112xbf16> {fp8.name = "dy"},
    %main_grad: tensor<2112x7168xf32> {fp8.name = "main_grad"})
    -> (tensor<4096x2112xbf16> {fp8.name = "y"},
        tensor<4096x7168xbf16> {fp8.name = "dx"},
        tensor<2112x7168xf32> {fp8.name = "dw"}) {
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>}
      : (tensor<4096x7168xbf16>, tensor<2112x7168xbf16>) -> tensor<4096x2112xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy accumulate_into %main_grad
      {recipe = #fp8.blockwise<>}
      : (tensor<4096x7168xbf16>, tensor<2112x7168xbf16>, tensor<4096x2112xbf16>,
         tensor<2112x7168xf32>) -> (tensor<4096x7168xbf16>, tensor<2112x7168xf32>)
  return %y, %dx, %dw
      : tensor<4096x2112xbf16>, tensor<4096x7168xbf16>, tensor<2112x7168xf32>
}

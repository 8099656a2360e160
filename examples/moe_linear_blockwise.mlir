// Recipe: DeepSeek-V3 blockwise (1x128 activations and gradients, 128x128 weights per expert)
// Chips: sm_90a
//
// One training step of the expert layers of a mixture-of-experts block as
// fp8.grouped_linear and fp8.grouped_linear_backward
// (docs/grouped-linear.md): the tokens of all 8 experts in one [M, K]
// tensor, sorted by expert, each expert's rows starting at a multiple of
// 128 (zero padding rows); the experts' weights [8, N, K] in bf16;
// %experts the expert of each row (-1 for padding rows), %sizes each
// expert's rows with its padding (multiples of 128, back to back).
// fp8-expand-linear quantizes X and dY in 1x128 blocks (rowwise and
// transposed columnwise copies) and the 8 weights in 128x128 tiles (one
// kernel for all of them, with each expert's transpose), then runs
//   fprop Y  = X W[g]^T    one m_contiguous grouped GEMM
//   dgrad dX = dY W[g]     one m_contiguous grouped GEMM
//   wgrad dW = dY_g^T X_g  one k_grouped grouped GEMM (each expert's
//                          tokens are its K), f32 [8, N, K]
// The backward reduces over the tokens: the step takes a static M (the
// forward alone, inference, takes a run-time M).

// The gate/up projection of DeepSeek-V3's experts (7168 -> 4096).
func.func @experts_up_step(%x: tensor<8192x7168xbf16>, %w: tensor<8x4096x7168xbf16>,
                           %experts: tensor<8192xi32>, %sizes: tensor<8xi32>,
                           %dy: tensor<8192x4096xbf16>)
    -> (tensor<8192x4096xbf16>, tensor<8192x7168xbf16>, tensor<8x4096x7168xf32>) {
  %y = fp8.grouped_linear %x, %w groups %experts {recipe = #fp8.blockwise<>}
      : (tensor<8192x7168xbf16>, tensor<8x4096x7168xbf16>, tensor<8192xi32>)
      -> tensor<8192x4096xbf16>
  %dx, %dw = fp8.grouped_linear_backward %x, %w, %dy groups(%experts, %sizes)
      {recipe = #fp8.blockwise<>}
      : (tensor<8192x7168xbf16>, tensor<8x4096x7168xbf16>, tensor<8192x4096xbf16>,
         tensor<8192xi32>, tensor<8xi32>)
      -> (tensor<8192x7168xbf16>, tensor<8x4096x7168xf32>)
  return %y, %dx, %dw
      : tensor<8192x4096xbf16>, tensor<8192x7168xbf16>, tensor<8x4096x7168xf32>
}

// The down projection (2048 -> 7168).
func.func @experts_down_step(%h: tensor<8192x2048xbf16>, %w: tensor<8x7168x2048xbf16>,
                             %experts: tensor<8192xi32>, %sizes: tensor<8xi32>,
                             %dy: tensor<8192x7168xbf16>)
    -> (tensor<8192x7168xbf16>, tensor<8192x2048xbf16>, tensor<8x7168x2048xf32>) {
  %y = fp8.grouped_linear %h, %w groups %experts {recipe = #fp8.blockwise<>}
      : (tensor<8192x2048xbf16>, tensor<8x7168x2048xbf16>, tensor<8192xi32>)
      -> tensor<8192x7168xbf16>
  %dh, %dw = fp8.grouped_linear_backward %h, %w, %dy groups(%experts, %sizes)
      {recipe = #fp8.blockwise<>}
      : (tensor<8192x2048xbf16>, tensor<8x7168x2048xbf16>, tensor<8192x7168xbf16>,
         tensor<8192xi32>, tensor<8xi32>)
      -> (tensor<8192x2048xbf16>, tensor<8x7168x2048xf32>)
  return %y, %dh, %dw
      : tensor<8192x7168xbf16>, tensor<8192x2048xbf16>, tensor<8x7168x2048xf32>
}

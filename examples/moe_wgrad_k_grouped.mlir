// Recipe: grouped weight-gradient GEMMs (DeepSeek-V3 blockwise 1x128 x 1x128, rowwise, per-tensor)
// Chips: sm_90a
//
// The weight gradients of a mixture-of-experts layer's experts,
// dW_g = dY_g^T X_g, as fp8.grouped_scaled_matmul in the k_grouped layout
// (docs/grouped.md): the tokens of all 8 experts one after the other along
// K, sorted by expert, each expert's count a multiple of 128 (0 allowed);
// dY^T [N_out, T] and X^T [K_in, T] are the columnwise (transposed) FP8
// copies the quantization writes; %tokens the tokens of each expert, read
// on the device. One persistent kernel per GEMM walks (expert, tile), each
// tile's K loop over its expert's tokens; an expert without tokens gets
// dW_g = 0.

// The down projection's weight gradient (W [7168, 2048] per expert),
// DeepSeek-V3 blockwise: 1x128 scales along the tokens on both sides, in
// the columnwise quantization's layout; f32 for the optimizer.
func.func @experts_down_wgrad_blockwise(
    %dyt: tensor<7168x?xf8E4M3FN>, %xt: tensor<2048x?xf8E4M3FN>,
    %sdy: tensor<7168x?xf32>, %sx: tensor<2048x?xf32>,
    %tokens: tensor<8xi32>) -> tensor<8x7168x2048xf32> {
  %dw = fp8.grouped_scaled_matmul %dyt, %xt, %sdy, %sx, %tokens
      {layout = #fp8.grouped_layout<k_grouped>,
       a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 1x128>,
       accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<7168x?xf8E4M3FN>, tensor<2048x?xf8E4M3FN>, tensor<7168x?xf32>,
         tensor<2048x?xf32>, tensor<8xi32>) -> tensor<8x7168x2048xf32>
  return %dw : tensor<8x7168x2048xf32>
}

// The gate/up projection's (W [4096, 7168] per expert), rowwise: one scale
// per row of each expert's slice of dY^T and X^T; bf16.
func.func @experts_up_wgrad_rowwise(
    %dyt: tensor<4096x?xf8E5M2>, %xt: tensor<7168x?xf8E4M3FN>,
    %sdy: tensor<8x4096x1xf32>, %sx: tensor<8x7168x1xf32>,
    %tokens: tensor<8xi32>) -> tensor<8x4096x7168xbf16> {
  %dw = fp8.grouped_scaled_matmul %dyt, %xt, %sdy, %sx, %tokens
      {layout = #fp8.grouped_layout<k_grouped>,
       a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<4096x?xf8E5M2>, tensor<7168x?xf8E4M3FN>, tensor<8x4096x1xf32>,
         tensor<8x7168x1xf32>, tensor<8xi32>) -> tensor<8x4096x7168xbf16>
  return %dw : tensor<8x4096x7168xbf16>
}

// Per-tensor: one scale per expert's slice of each operand.
func.func @experts_down_wgrad_tensorwise(
    %dyt: tensor<7168x?xf8E5M2>, %xt: tensor<2048x?xf8E4M3FN>,
    %sdy: tensor<4xf32>, %sx: tensor<4xf32>,
    %tokens: tensor<4xi32>) -> tensor<4x7168x2048xf32> {
  %dw = fp8.grouped_scaled_matmul %dyt, %xt, %sdy, %sx, %tokens
      {layout = #fp8.grouped_layout<k_grouped>,
       a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>,
       accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<7168x?xf8E5M2>, tensor<2048x?xf8E4M3FN>, tensor<4xf32>, tensor<4xf32>,
         tensor<4xi32>) -> tensor<4x7168x2048xf32>
  return %dw : tensor<4x7168x2048xf32>
}

// Recipe: #fp8.current<epsilon = 0.0, pow2 = false, format = hybrid>
// Chips: sm_90a sm_100a
//
// Per-tensor current scaling (Transformer Engine Float8CurrentScaling) for
// the dgrad GEMM dX = dY W of a linear layer: the gradient dY is E5M2 (hybrid
// format), the weight E4M3. Each tensor's scale comes from its own amax.
// The weight W [N, K] enters dgrad with N as the reduction dimension, so it is
// quantized with a columnwise (transposed) output: W^T [K, N] is K-major.
func.func @dgrad_current(%dy: tensor<?x7168xbf16>, %w: tensor<7168x4096xbf16>)
    -> tensor<?x4096xbf16> {
  %dy_amax = fp8.amax %dy : tensor<?x7168xbf16> -> tensor<f32>
  %dy_scale, %dy_scale_inv = fp8.compute_scale %dy_amax
      {recipe = #fp8.current<>, element_type = f8E5M2}
      : tensor<f32> -> tensor<f32>, tensor<f32>
  %dyq, %dys = fp8.quantize %dy scale %dy_scale
      {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>}
      : tensor<?x7168xbf16>, tensor<f32> -> rowwise(tensor<?x7168xf8E5M2>, tensor<f32>)
  // Amax, scale and cast of W in one op (fp8-decompose-quantize splits it).
  %wt, %wts = fp8.quantize %w
      {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>}
      : tensor<7168x4096xbf16> -> columnwise(tensor<4096x7168xf8E4M3FN>, tensor<f32>)
  %dx = fp8.scaled_matmul %dyq, %wt, %dys, %wts
      {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>,
       accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.current<>}
      : (tensor<?x7168xf8E5M2>, tensor<4096x7168xf8E4M3FN>, tensor<f32>, tensor<f32>)
      -> tensor<?x4096xbf16>
  return %dx : tensor<?x4096xbf16>
}

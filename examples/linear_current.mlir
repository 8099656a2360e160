// Recipe: #fp8.current<epsilon = 0.0, pow2 = false, format = hybrid>
// Chips: sm_90a sm_100a
//
// One training step of a linear layer with bias, Y = X W^T + b, under
// per-tensor current scaling (Transformer Engine Float8CurrentScaling, hybrid
// format). Each quantization computes its tensor's amax and scale. After
// fp8-expand-linear the backward reads only FP8 data: on sm_90a the
// transposed columnwise copies of X, W and dY (one byte per element kept
// for the backward instead of bf16's two), on sm_100a the same single copy
// per tensor that the forward uses, read MN-major (NN dgrad, NT wgrad).
func.func @linear_step_current(
    %x: tensor<4096x4096xbf16> {fp8.name = "x"},
    %w: tensor<4096x4096xbf16> {fp8.name = "w"},
    %bias: tensor<4096xf32> {fp8.name = "bias"},
    %dy: tensor<4096x4096xbf16> {fp8.name = "dy"})
    -> (tensor<4096x4096xbf16> {fp8.name = "y"},
        tensor<4096x4096xbf16> {fp8.name = "dx"},
        tensor<4096x4096xf32> {fp8.name = "dw"}) {
  %y = fp8.linear %x, %w bias %bias {recipe = #fp8.current<>}
      : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>, tensor<4096xf32>)
      -> tensor<4096x4096xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>}
      : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>, tensor<4096x4096xbf16>)
      -> (tensor<4096x4096xbf16>, tensor<4096x4096xf32>)
  return %y, %dx, %dw
      : tensor<4096x4096xbf16>, tensor<4096x4096xbf16>, tensor<4096x4096xf32>
}

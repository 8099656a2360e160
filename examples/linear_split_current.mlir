// Recipe: #fp8.current<epsilon = 0.0, pow2 = false, format = hybrid>
// Chips: sm_90a sm_100a
//
// The training step of examples/linear_current.mlir as two calls, the way
// PyTorch's autograd runs a layer: `fp8.split_backward` makes fp8-to-ptx
// (fp8-split-training-step) outline it into @linear_current_forward (X and
// W quantized, fprop) and @linear_current_backward (dY quantized, dgrad,
// wgrad), with the same kernels in the same order. The forward also returns
// what the backward reads: the FP8 copies of X and W and their scales (on
// sm_90a the transposed columnwise copies, x_columnwise / w_columnwise; on
// sm_100a the one copy each, x_rowwise / w_rowwise, read MN-major), one
// byte per element, each tensor quantized once. Arguments and results are
// bound by their fp8.name.
func.func @linear_current(
    %x: tensor<4096x4096xbf16> {fp8.name = "x"},
    %w: tensor<4096x4096xbf16> {fp8.name = "w"},
    %bias: tensor<4096xf32> {fp8.name = "bias"},
    %dy: tensor<4096x4096xbf16> {fp8.name = "dy"})
    -> (tensor<4096x4096xbf16> {fp8.name = "y"},
        tensor<4096x4096xbf16> {fp8.name = "dx"},
        tensor<4096x4096xf32> {fp8.name = "dw"})
    attributes {fp8.split_backward} {
  %y = fp8.linear %x, %w bias %bias {recipe = #fp8.current<>}
      : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>, tensor<4096xf32>)
      -> tensor<4096x4096xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>}
      : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>, tensor<4096x4096xbf16>)
      -> (tensor<4096x4096xbf16>, tensor<4096x4096xf32>)
  return %y, %dx, %dw
      : tensor<4096x4096xbf16>, tensor<4096x4096xbf16>, tensor<4096x4096xf32>
}

// Recipe: #fp8.mxfp8<block = 32, rounding = round_up, format = e4m3>
// Chips: sm_100a
//
// The MXFP8 training step of examples/linear_mxfp8.mlir as a forward and a
// backward call (fp8.split_backward): the forward quantizes X and W in
// both directions (1x32 blocks along rows and along columns, untransposed)
// and returns the columnwise copies and their UE8M0 scales, which dgrad
// (W) and wgrad (X) read.
func.func @linear_mxfp8(
    %x: tensor<8192x2048xbf16> {fp8.name = "x"},
    %w: tensor<4096x2048xbf16> {fp8.name = "w"},
    %dy: tensor<8192x4096xbf16> {fp8.name = "dy"})
    -> (tensor<8192x4096xbf16> {fp8.name = "y"},
        tensor<8192x2048xbf16> {fp8.name = "dx"},
        tensor<4096x2048xf32> {fp8.name = "dw"})
    attributes {fp8.split_backward} {
  %y = fp8.linear %x, %w {recipe = #fp8.mxfp8<>}
      : (tensor<8192x2048xbf16>, tensor<4096x2048xbf16>) -> tensor<8192x4096xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.mxfp8<>}
      : (tensor<8192x2048xbf16>, tensor<4096x2048xbf16>, tensor<8192x4096xbf16>)
      -> (tensor<8192x2048xbf16>, tensor<4096x2048xf32>)
  return %y, %dx, %dw
      : tensor<8192x4096xbf16>, tensor<8192x2048xbf16>, tensor<4096x2048xf32>
}

// Recipe: #fp8.blockwise<act = 1x128, weight = 128x128, scales = pow2, amax_clamp = 1.0e-4>
// Chips: sm_90a sm_100a
//
// The blockwise (DeepSeek-V3) training step of examples/linear_blockwise.mlir
// as a forward and a backward call (fp8.split_backward). The split comes
// after the choices made for both phases together: on sm_90a the forward
// returns X's and W's transposed columnwise quantizations (1x128 and
// 128x128 tiles); on sm_100a the untransposed columnwise copies with their
// scales already in the MXFP8 GEMMs' UE8M0 atom layout, as the fused step's
// quantize kernels write them.
func.func @linear_blockwise(
    %x: tensor<4096x7168xbf16> {fp8.name = "x"},
    %w: tensor<2112x7168xbf16> {fp8.name = "w"},
    %dy: tensor<4096x2112xbf16> {fp8.name = "dy"},
    %main_grad: tensor<2112x7168xf32> {fp8.name = "main_grad"})
    -> (tensor<4096x2112xbf16> {fp8.name = "y"},
        tensor<4096x7168xbf16> {fp8.name = "dx"},
        tensor<2112x7168xf32> {fp8.name = "dw"})
    attributes {fp8.split_backward} {
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>}
      : (tensor<4096x7168xbf16>, tensor<2112x7168xbf16>) -> tensor<4096x2112xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy accumulate_into %main_grad
      {recipe = #fp8.blockwise<>}
      : (tensor<4096x7168xbf16>, tensor<2112x7168xbf16>, tensor<4096x2112xbf16>,
         tensor<2112x7168xf32>) -> (tensor<4096x7168xbf16>, tensor<2112x7168xf32>)
  return %y, %dx, %dw
      : tensor<4096x2112xbf16>, tensor<4096x7168xbf16>, tensor<2112x7168xf32>
}

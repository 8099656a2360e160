// Recipe: #fp8.delayed<history = 1024, algo = max, margin = 0, format = hybrid>
// Chips: sm_90a sm_100a
//
// The delayed-scaling training step of examples/linear_delayed.mlir as a
// forward and a backward call (fp8.split_backward). The scaling state
// splits with the ops that read it: @linear_delayed_forward takes X's and
// W's scales and amax histories, records this step's amaxes in the casts
// and returns the next scales and the rolled histories (updated in place);
// @linear_delayed_backward does the same for dY. The forward also returns
// the FP8 copies of X and W (and their scale_inv) that dgrad and wgrad
// read.
func.func @linear_delayed(
    %x: tensor<4096x2048xbf16> {fp8.name = "x"},
    %w: tensor<7168x2048xbf16> {fp8.name = "w"},
    %dy: tensor<4096x7168xbf16> {fp8.name = "dy"},
    %main_grad: tensor<7168x2048xf32> {fp8.name = "main_grad"},
    %x_scale: tensor<f32> {fp8.name = "x_scale"},
    %w_scale: tensor<f32> {fp8.name = "w_scale"},
    %dy_scale: tensor<f32> {fp8.name = "dy_scale"},
    %x_history: tensor<1024xf32> {fp8.name = "x_history"},
    %w_history: tensor<1024xf32> {fp8.name = "w_history"},
    %dy_history: tensor<1024xf32> {fp8.name = "dy_history"})
    -> (tensor<4096x7168xbf16> {fp8.name = "y"},
        tensor<4096x2048xbf16> {fp8.name = "dx"},
        tensor<7168x2048xf32> {fp8.name = "dw"},
        tensor<f32> {fp8.name = "x_scale_next"},
        tensor<f32> {fp8.name = "w_scale_next"},
        tensor<f32> {fp8.name = "dy_scale_next"},
        tensor<1024xf32> {fp8.name = "x_history_next"},
        tensor<1024xf32> {fp8.name = "w_history_next"},
        tensor<1024xf32> {fp8.name = "dy_history_next"})
    attributes {fp8.split_backward} {
  %y, %x_amax, %w_amax = fp8.linear %x, %w scales(%x_scale, %w_scale)
      {recipe = #fp8.delayed<>}
      : (tensor<4096x2048xbf16>, tensor<7168x2048xbf16>, tensor<f32>, tensor<f32>)
      -> (tensor<4096x7168xbf16>, tensor<f32>, tensor<f32>)
  %dx, %dw, %dy_amax = fp8.linear_backward %x, %w, %dy accumulate_into %main_grad
      scales(%x_scale, %w_scale, %dy_scale) {recipe = #fp8.delayed<>}
      : (tensor<4096x2048xbf16>, tensor<7168x2048xbf16>, tensor<4096x7168xbf16>,
         tensor<7168x2048xf32>, tensor<f32>, tensor<f32>, tensor<f32>)
      -> (tensor<4096x2048xbf16>, tensor<7168x2048xf32>, tensor<f32>)

  // Record this step's amaxes, then compute the next step's scales.
  %xh = fp8.update_amax_history %x_history, %x_amax {recipe = #fp8.delayed<>}
      : tensor<1024xf32>, tensor<f32>
  %wh = fp8.update_amax_history %w_history, %w_amax {recipe = #fp8.delayed<>}
      : tensor<1024xf32>, tensor<f32>
  %dyh = fp8.update_amax_history %dy_history, %dy_amax {recipe = #fp8.delayed<>}
      : tensor<1024xf32>, tensor<f32>
  %xs, %xsi, %xh1 = fp8.compute_scale %xh, %x_scale
      {recipe = #fp8.delayed<>, element_type = f8E4M3FN}
      : tensor<1024xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<1024xf32>
  %ws, %wsi, %wh1 = fp8.compute_scale %wh, %w_scale
      {recipe = #fp8.delayed<>, element_type = f8E4M3FN}
      : tensor<1024xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<1024xf32>
  %dys, %dysi, %dyh1 = fp8.compute_scale %dyh, %dy_scale
      {recipe = #fp8.delayed<>, element_type = f8E5M2}
      : tensor<1024xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<1024xf32>
  return %y, %dx, %dw, %xs, %ws, %dys, %xh1, %wh1, %dyh1
      : tensor<4096x7168xbf16>, tensor<4096x2048xbf16>, tensor<7168x2048xf32>,
        tensor<f32>, tensor<f32>, tensor<f32>,
        tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>
}

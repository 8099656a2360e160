// Recipe: #fp8.delayed<history = 1024, algo = max, margin = 0, format = hybrid>
// Chips: sm_90a sm_100a
//
// One step of per-tensor delayed scaling (Transformer Engine DelayedScaling)
// for a linear layer's forward GEMM Y = X W^T. Each tensor is cast with the
// scale computed from the amax history of the previous steps (one pass over
// memory); the cast records this step's amax, and the amax-and-scale update
// produces next step's scale and rolled history.
func.func @fprop_delayed(
    %x: tensor<?x4096xbf16>, %w: tensor<7168x4096xbf16>,
    %x_scale: tensor<f32>, %w_scale: tensor<f32>,
    %x_history: tensor<1024xf32>, %w_history: tensor<1024xf32>)
    -> (tensor<?x7168xbf16>, tensor<f32>, tensor<1024xf32>, tensor<f32>, tensor<1024xf32>) {
  %xq, %xs, %x_amax = fp8.quantize %x scale %x_scale
      {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>}
      : tensor<?x4096xbf16>, tensor<f32>
      -> rowwise(tensor<?x4096xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
  %wq, %ws, %w_amax = fp8.quantize %w scale %w_scale
      {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>}
      : tensor<7168x4096xbf16>, tensor<f32>
      -> rowwise(tensor<7168x4096xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
  %y = fp8.scaled_matmul %xq, %wq, %xs, %ws
      {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>,
       accumulation = #fp8.accumulation<fast>, recipe = #fp8.delayed<>}
      : (tensor<?x4096xf8E4M3FN>, tensor<7168x4096xf8E4M3FN>, tensor<f32>, tensor<f32>)
      -> tensor<?x7168xbf16>

  // Amax-and-scale update for the next step.
  %xh = fp8.update_amax_history %x_history, %x_amax {recipe = #fp8.delayed<>}
      : tensor<1024xf32>, tensor<f32>
  %x_next, %x_next_inv, %x_history_next = fp8.compute_scale %xh, %x_scale
      {recipe = #fp8.delayed<>, element_type = f8E4M3FN}
      : tensor<1024xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<1024xf32>
  %wh = fp8.update_amax_history %w_history, %w_amax {recipe = #fp8.delayed<>}
      : tensor<1024xf32>, tensor<f32>
  %w_next, %w_next_inv, %w_history_next = fp8.compute_scale %wh, %w_scale
      {recipe = #fp8.delayed<>, element_type = f8E4M3FN}
      : tensor<1024xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<1024xf32>
  return %y, %x_next, %x_history_next, %w_next, %w_history_next
      : tensor<?x7168xbf16>, tensor<f32>, tensor<1024xf32>, tensor<f32>, tensor<1024xf32>
}

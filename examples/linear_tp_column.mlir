// Recipe: #fp8.current<epsilon = 0.0, pow2 = false, format = hybrid>
// Chips: sm_90a sm_100a
//
// One device's training step of a column-parallel linear layer with
// sequence parallelism on 2 devices (grid @tp), Y = X W^T with X [4096, 4096]
// split over the tokens and W [4096, 4096] over its rows: what
//   fp8-opt --fp8-shard-linear="mode=column world-size=2 f32-partials=false"
// writes for the single-device step of examples/linear_current.mlir without
// the bias (docs/distributed.md). Every FP8 tensor a GEMM reads equals the
// single-device one bit for bit: each per-tensor scale comes from the amax
// of the device's shard max-all-reduced over the group. fp8-compile turns
// the annotated X into the sharded quantization (fp8-shard-quantize): the
// rowwise FP8 shard all-gathered before fprop, the columnwise (transposed)
// shard kept and all-gathered along its columns before wgrad. dY's column
// block and that gather are strided: module.json has `copy2d` steps around
// them. dX's partial sum is reduce-scattered over the tokens in bf16.
//
// Arguments: the whole X, W and dY on every device; results: this device's
// Y columns [4096, 2048], dX tokens [2048, 4096] and dW rows [2048, 4096].
shard.grid @tp(shape = 2)
func.func @linear_step_tp_column(
    %x: tensor<4096x4096xbf16> {fp8.name = "x"},
    %w: tensor<4096x4096xbf16> {fp8.name = "w"},
    %dy: tensor<4096x4096xbf16> {fp8.name = "dy"})
    -> (tensor<4096x2048xbf16> {fp8.name = "y"},
        tensor<2048x4096xbf16> {fp8.name = "dx"},
        tensor<2048x4096xf32> {fp8.name = "dw"}) {
  // X: the scale of the whole tensor from this device's token shard.
  %x_local = shard.all_slice %x on @tp grid_axes = [0] slice_axis = 0
      : tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
  %x_amax_local = fp8.amax %x_local : tensor<2048x4096xbf16> -> tensor<f32>
  %x_amax = shard.all_reduce %x_amax_local on @tp grid_axes = [0] reduction = max
      : tensor<f32> -> tensor<f32>
  %x_scale, %x_scale_inv = fp8.compute_scale %x_amax
      {element_type = f8E4M3FN, recipe = #fp8.current<>}
      : tensor<f32> -> tensor<f32>, tensor<f32>
  %tokens = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %x_split = shard.shard %x to %tokens annotate_for_users : tensor<4096x4096xbf16>
  // W: this device's rows, the scale of the whole weight.
  %w_local = shard.all_slice %w on @tp grid_axes = [0] slice_axis = 0
      : tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
  %w_amax_local = fp8.amax %w_local : tensor<2048x4096xbf16> -> tensor<f32>
  %w_amax = shard.all_reduce %w_amax_local on @tp grid_axes = [0] reduction = max
      : tensor<f32> -> tensor<f32>
  %w_scale, %w_scale_inv = fp8.compute_scale %w_amax
      {element_type = f8E4M3FN, recipe = #fp8.current<>}
      : tensor<f32> -> tensor<f32>, tensor<f32>
  %y = fp8.linear %x_split, %w_local scales(%x_scale, %w_scale)
      {recipe = #fp8.current<>}
      : (tensor<4096x4096xbf16>, tensor<2048x4096xbf16>, tensor<f32>, tensor<f32>)
      -> tensor<4096x2048xbf16>
  // dY: this device's columns (a strided slice), the whole tensor's scale.
  %dy_local = shard.all_slice %dy on @tp grid_axes = [0] slice_axis = 1
      : tensor<4096x4096xbf16> -> tensor<4096x2048xbf16>
  %dy_amax_local = fp8.amax %dy_local : tensor<4096x2048xbf16> -> tensor<f32>
  %dy_amax = shard.all_reduce %dy_amax_local on @tp grid_axes = [0] reduction = max
      : tensor<f32> -> tensor<f32>
  %dy_scale, %dy_scale_inv = fp8.compute_scale %dy_amax
      {element_type = f8E5M2, recipe = #fp8.current<>}
      : tensor<f32> -> tensor<f32>, tensor<f32>
  %dx_partial, %dw = fp8.linear_backward %x_split, %w_local, %dy_local
      scales(%x_scale, %w_scale, %dy_scale) {recipe = #fp8.current<>}
      : (tensor<4096x4096xbf16>, tensor<2048x4096xbf16>, tensor<4096x2048xbf16>,
         tensor<f32>, tensor<f32>, tensor<f32>)
      -> (tensor<4096x4096xbf16>, tensor<2048x4096xf32>)
  // dX: this device's tokens of the sum of the partials.
  %dx = shard.reduce_scatter %dx_partial on @tp grid_axes = [0] scatter_axis = 0
      : tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
  return %y, %dx, %dw
      : tensor<4096x2048xbf16>, tensor<2048x4096xbf16>, tensor<2048x4096xf32>
}

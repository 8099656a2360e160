// RUN: fp8-opt %s -fp8-shard-linear="mode=row world-size=2" -fp8-attach-target=chip=sm_90a -fp8-expand-linear -fp8-shard-quantize -cse | FileCheck %s

// A row-parallel blockwise step after expansion for sm_90a: X's and W's
// column shards (K/T = 256, whole 1x128 and 128x128 blocks) are quantized
// where they lie, with no communication; Y's f32 partial is
// reduce-scattered over the tokens; dY's token shard is quantized alone and
// its FP8 data and 1x128 scales all-gathered, rowwise before dgrad,
// columnwise before wgrad.
// CHECK-LABEL: func.func @row_blockwise
// CHECK-NOT: shard.all_reduce
// CHECK: %[[XL:[^ ,]*]] = shard.all_slice %{{.*}} slice_axis = 1 : tensor<1024x512xbf16> -> tensor<1024x256xbf16>
// CHECK: %[[WL:[^ ,]*]] = shard.all_slice %{{.*}} slice_axis = 1 : tensor<256x512xbf16> -> tensor<256x256xbf16>
// CHECK: %[[QX:[^ ,]*]], %[[SX:[^ ,]*]], %[[QXT:[^ ,]*]], %[[SXT:[^ ,]*]] = fp8.quantize %[[XL]]
// CHECK: %[[QW:[^ ,]*]], %[[SW:[^ ,]*]], %[[QWT:[^ ,]*]], %[[SWT:[^ ,]*]] = fp8.quantize %[[WL]]
// CHECK: %[[YP:[^ ,]*]] = fp8.scaled_matmul %[[QX]], %[[QW]], %[[SX]], %[[SW]] {{.*}} -> tensor<1024x256xf32>
// CHECK: shard.reduce_scatter %[[YP]] on @tp grid_axes = [0] scatter_axis = 0 : tensor<1024x256xf32> -> tensor<512x256xf32>
// CHECK: %[[DYL:[^ ,]*]] = shard.all_slice %{{.*}} slice_axis = 0 : tensor<1024x256xbf16> -> tensor<512x256xbf16>
// CHECK: %[[QDY:[^ ,]*]], %[[SDY:[^ ,]*]], %[[QDYT:[^ ,]*]], %[[SDYT:[^ ,]*]] = fp8.quantize %[[DYL]] {{.*}} -> rowwise(tensor<512x256xf8E4M3FN>, tensor<512x2xf32>) columnwise(tensor<256x512xf8E4M3FN>, tensor<256x4xf32>)
// CHECK: %[[G:[^ ,]*]] = shard.all_gather %[[QDY]] on @tp grid_axes = [0] gather_axis = 0 : tensor<512x256xf8E4M3FN> -> tensor<1024x256xf8E4M3FN>
// CHECK: %[[GS:[^ ,]*]] = shard.all_gather %[[SDY]] on @tp grid_axes = [0] gather_axis = 0 : tensor<512x2xf32> -> tensor<1024x2xf32>
// CHECK: fp8.scaled_matmul %[[G]], %[[QWT]], %[[GS]], %[[SWT]] {{.*}} -> tensor<1024x256xbf16>
// CHECK: %[[GT:[^ ,]*]] = shard.all_gather %[[QDYT]] on @tp grid_axes = [0] gather_axis = 1 : tensor<256x512xf8E4M3FN> -> tensor<256x1024xf8E4M3FN>
// CHECK: %[[GTS:[^ ,]*]] = shard.all_gather %[[SDYT]] on @tp grid_axes = [0] gather_axis = 1 : tensor<256x4xf32> -> tensor<256x8xf32>
// CHECK: fp8.scaled_matmul %[[GT]], %[[QXT]], %[[GTS]], %[[SXT]] {{.*}} -> tensor<256x256xf32>
func.func @row_blockwise(%x: tensor<1024x512xbf16>, %w: tensor<256x512xbf16>, %dy: tensor<1024x256xbf16>) -> (tensor<1024x256xbf16>, tensor<1024x512xbf16>, tensor<256x512xf32>) {
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>) -> tensor<1024x256xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.blockwise<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>, tensor<1024x256xbf16>) -> (tensor<1024x512xbf16>, tensor<256x512xf32>)
  return %y, %dx, %dw : tensor<1024x256xbf16>, tensor<1024x512xbf16>, tensor<256x512xf32>
}

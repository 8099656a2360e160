// RUN: fp8-opt %s -split-input-file -fp8-shard-linear="mode=column world-size=2" -fp8-attach-target=chip=sm_90a -fp8-expand-linear -fp8-shard-quantize -cse | FileCheck %s

// A column-parallel step after expansion for sm_90a and sharded
// quantization, current scaling: the collectives in the order the seed's
// rule gives them. X: amax all-reduce, the shard quantized rowwise and
// columnwise, the rowwise FP8 all-gather before fprop; the columnwise shard
// is kept and gathered when the backward starts (before wgrad); dX's f32
// partial is reduce-scattered over the tokens.
// CHECK-LABEL: func.func @column_step
// CHECK: %[[XL:[^ ,]*]] = shard.all_slice %[[X:[^ ]*]] on @tp grid_axes = [0] slice_axis = 0 : tensor<1024x512xbf16> -> tensor<512x512xbf16>
// CHECK: %[[AX:[^ ,]*]] = fp8.amax %[[XL]]
// CHECK: shard.all_reduce %[[AX]] on @tp grid_axes = [0] reduction = max
// CHECK: %[[SX:[^ ,]*]], %{{.*}} = fp8.compute_scale
// CHECK: %[[WL:[^ ,]*]] = shard.all_slice %{{.*}} slice_axis = 0 : tensor<256x512xbf16> -> tensor<128x512xbf16>
// CHECK: %[[AW:[^ ,]*]] = fp8.amax %[[WL]]
// CHECK: shard.all_reduce %[[AW]] on @tp grid_axes = [0] reduction = max
// CHECK: %[[SW:[^ ,]*]], %{{.*}} = fp8.compute_scale
// CHECK: %[[QX:[^ ,]*]], %{{.*}}, %[[QXT:[^ ,]*]], %{{.*}} = fp8.quantize %[[XL]] scale %[[SX]] {{.*}} -> rowwise(tensor<512x512xf8E4M3FN>, tensor<f32>) columnwise(tensor<512x512xf8E4M3FN>, tensor<f32>)
// CHECK: %[[QW:[^ ,]*]], %{{.*}}, %[[QWT:[^ ,]*]], %{{.*}} = fp8.quantize %[[WL]] scale %[[SW]] {{.*}} -> rowwise(tensor<128x512xf8E4M3FN>, tensor<f32>) columnwise(tensor<512x128xf8E4M3FN>, tensor<f32>)
// CHECK: %[[GX:[^ ,]*]] = shard.all_gather %[[QX]] on @tp grid_axes = [0] gather_axis = 0 : tensor<512x512xf8E4M3FN> -> tensor<1024x512xf8E4M3FN>
// CHECK: %[[Y:[^ ,]*]] = fp8.scaled_matmul %[[GX]], %[[QW]],{{.*}} -> tensor<1024x128xbf16>
// CHECK: %[[DYL:[^ ,]*]] = shard.all_slice %{{.*}} slice_axis = 1 : tensor<1024x256xbf16> -> tensor<1024x128xbf16>
// CHECK: %[[ADY:[^ ,]*]] = fp8.amax %[[DYL]]
// CHECK: shard.all_reduce %[[ADY]] on @tp grid_axes = [0] reduction = max
// CHECK: %[[QDY:[^ ,]*]], %{{.*}}, %[[QDYT:[^ ,]*]], %{{.*}} = fp8.quantize %[[DYL]] scale {{.*}} -> rowwise(tensor<1024x128xf8E5M2>, tensor<f32>) columnwise(tensor<128x1024xf8E5M2>, tensor<f32>)
// CHECK: %[[DXP:[^ ,]*]] = fp8.scaled_matmul %[[QDY]], %[[QWT]],{{.*}} -> tensor<1024x512xf32>
// CHECK: %[[GXT:[^ ,]*]] = shard.all_gather %[[QXT]] on @tp grid_axes = [0] gather_axis = 1 : tensor<512x512xf8E4M3FN> -> tensor<512x1024xf8E4M3FN>
// CHECK: %[[DW:[^ ,]*]] = fp8.scaled_matmul %[[QDYT]], %[[GXT]],{{.*}} -> tensor<128x512xf32>
// CHECK: %[[DXR:[^ ,]*]] = shard.reduce_scatter %[[DXP]] on @tp grid_axes = [0] scatter_axis = 0 : tensor<1024x512xf32> -> tensor<512x512xf32>
// CHECK: %[[DX:[^ ,]*]] = arith.truncf %[[DXR]]
// CHECK: return %[[Y]], %[[DX]], %[[DW]] : tensor<1024x128xbf16>, tensor<512x512xbf16>, tensor<128x512xf32>
func.func @column_step(%x: tensor<1024x512xbf16>, %w: tensor<256x512xbf16>, %dy: tensor<1024x256xbf16>) -> (tensor<1024x256xbf16>, tensor<1024x512xbf16>, tensor<256x512xf32>) {
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>) -> tensor<1024x256xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>, tensor<1024x256xbf16>) -> (tensor<1024x512xbf16>, tensor<256x512xf32>)
  return %y, %dx, %dw : tensor<1024x256xbf16>, tensor<1024x512xbf16>, tensor<256x512xf32>
}

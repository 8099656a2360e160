// RUN: fp8-opt %s -split-input-file -fp8-shard-linear="mode=column world-size=2" | FileCheck %s

// Column-parallel with sequence parallelism, per-tensor current scaling:
// every split tensor's scale comes from its shard's amax max-all-reduced
// over the group; X (token shard) is annotated for the FP8 all-gather, W's
// rows and dY's columns are the device's slices; the f32 partial dX is
// reduce-scattered over the tokens and rounded once to bf16.
// CHECK: shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @column_current
// CHECK-SAME: -> (tensor<1024x128xbf16>, tensor<512x512xbf16>, tensor<128x512xf32>)
// CHECK: %[[XL:.*]] = shard.all_slice %[[X:[^ ]*]] on @tp grid_axes = [0] slice_axis = 0 : tensor<1024x512xbf16> -> tensor<512x512xbf16>
// CHECK: %[[AX:.*]] = fp8.amax %[[XL]]
// CHECK: %[[AXR:.*]] = shard.all_reduce %[[AX]] on @tp grid_axes = [0] reduction = max
// CHECK: %[[SCX:.*]], %{{.*}} = fp8.compute_scale %[[AXR]] {element_type = f8E4M3FN, recipe = #fp8.current<>}
// CHECK: %[[SX:.*]] = shard.sharding @tp split_axes = {{\[\[}}0]]
// CHECK: %[[XA:.*]] = shard.shard %[[X]] to %[[SX]] annotate_for_users : tensor<1024x512xbf16>
// CHECK: %[[WL:.*]] = shard.all_slice %{{.*}} slice_axis = 0 : tensor<256x512xbf16> -> tensor<128x512xbf16>
// CHECK: %[[AW:.*]] = fp8.amax %[[WL]]
// CHECK: %[[AWR:.*]] = shard.all_reduce %[[AW]] on @tp grid_axes = [0] reduction = max
// CHECK: %[[SCW:.*]], %{{.*}} = fp8.compute_scale %[[AWR]] {element_type = f8E4M3FN
// CHECK: %[[BL:.*]] = shard.all_slice %{{.*}} slice_axis = 0 : tensor<256xf32> -> tensor<128xf32>
// CHECK: %[[Y:.*]] = fp8.linear %[[XA]], %[[WL]] bias %[[BL]] scales(%[[SCX]], %[[SCW]]) {{.*}} -> tensor<1024x128xbf16>
// CHECK: %[[DYL:.*]] = shard.all_slice %{{.*}} slice_axis = 1 : tensor<1024x256xbf16> -> tensor<1024x128xbf16>
// CHECK: %[[ADY:.*]] = fp8.amax %[[DYL]]
// CHECK: %[[ADYR:.*]] = shard.all_reduce %[[ADY]] on @tp grid_axes = [0] reduction = max
// CHECK: %[[SCDY:.*]], %{{.*}} = fp8.compute_scale %[[ADYR]] {element_type = f8E5M2
// CHECK: %[[DXP:.*]], %[[DW:.*]] = fp8.linear_backward %[[XA]], %[[WL]], %[[DYL]] scales(%[[SCX]], %[[SCW]], %[[SCDY]]) {{.*}} -> (tensor<1024x512xf32>, tensor<128x512xf32>)
// CHECK: %[[DXR:.*]] = shard.reduce_scatter %[[DXP]] on @tp grid_axes = [0] scatter_axis = 0 : tensor<1024x512xf32> -> tensor<512x512xf32>
// CHECK: %[[DX:.*]] = arith.truncf %[[DXR]] : tensor<512x512xf32> to tensor<512x512xbf16>
// CHECK: return %[[Y]], %[[DX]], %[[DW]]
func.func @column_current(%x: tensor<1024x512xbf16>, %w: tensor<256x512xbf16>, %b: tensor<256xf32>, %dy: tensor<1024x256xbf16>) -> (tensor<1024x256xbf16>, tensor<1024x512xbf16>, tensor<256x512xf32>) {
  %y = fp8.linear %x, %w bias %b {recipe = #fp8.current<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>, tensor<256xf32>) -> tensor<1024x256xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>, tensor<1024x256xbf16>) -> (tensor<1024x512xbf16>, tensor<256x512xf32>)
  return %y, %dx, %dw : tensor<1024x256xbf16>, tensor<1024x512xbf16>, tensor<256x512xf32>
}

// -----

// Delayed scaling: the given scales are used as they are; the amaxes of the
// local shards (W, dY) are max-all-reduced for the histories (X's, gathered,
// by fp8-shard-quantize); the main gradient is sliced like W.
// CHECK-LABEL: func.func @column_delayed
// CHECK-NOT: fp8.amax
// CHECK: %[[XA:.*]] = shard.shard %{{.*}} annotate_for_users
// CHECK: %[[WL:.*]] = shard.all_slice %{{.*}} slice_axis = 0 : tensor<256x512xbf16> -> tensor<128x512xbf16>
// CHECK: %{{.*}}, %[[AMAX:.*]]:2 = fp8.linear %[[XA]], %[[WL]] scales(%{{.*}}, %{{.*}})
// CHECK-NOT: shard.all_reduce %[[AMAX]]#0
// CHECK: %[[AWR:.*]] = shard.all_reduce %[[AMAX]]#1 on @tp grid_axes = [0] reduction = max
// CHECK: %[[DYL:.*]] = shard.all_slice %{{.*}} slice_axis = 1
// CHECK: %[[GL:.*]] = shard.all_slice %{{.*}} slice_axis = 0 : tensor<256x512xf32> -> tensor<128x512xf32>
// CHECK: %{{.*}}, %{{.*}}, %[[ADY:.*]] = fp8.linear_backward %[[XA]], %[[WL]], %[[DYL]] accumulate_into %[[GL]] scales
// CHECK: shard.reduce_scatter
// CHECK: %[[ADYR:.*]] = shard.all_reduce %[[ADY]] on @tp grid_axes = [0] reduction = max
// CHECK: return {{.*}}, %[[AMAX]]#0, %[[AWR]], %[[ADYR]]
func.func @column_delayed(%x: tensor<1024x512xbf16>, %w: tensor<256x512xbf16>, %dy: tensor<1024x256xbf16>, %g: tensor<256x512xf32>, %sx: tensor<f32>, %sw: tensor<f32>, %sdy: tensor<f32>) -> (tensor<1024x256xbf16>, tensor<1024x512xbf16>, tensor<256x512xf32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %y, %ax, %aw = fp8.linear %x, %w scales(%sx, %sw) {recipe = #fp8.delayed<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>, tensor<f32>, tensor<f32>) -> (tensor<1024x256xbf16>, tensor<f32>, tensor<f32>)
  %dx, %dw, %ady = fp8.linear_backward %x, %w, %dy accumulate_into %g scales(%sx, %sw, %sdy) {recipe = #fp8.delayed<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>, tensor<1024x256xbf16>, tensor<256x512xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<1024x512xbf16>, tensor<256x512xf32>, tensor<f32>)
  return %y, %dx, %dw, %ax, %aw, %ady : tensor<1024x256xbf16>, tensor<1024x512xbf16>, tensor<256x512xf32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// Blockwise: no amax communication (every 128x128 W tile and every 1x128
// block lies on one device: N/T = 256, M/T = 512).
// CHECK-LABEL: func.func @column_blockwise
// CHECK-NOT: fp8.amax
// CHECK-NOT: shard.all_reduce
// CHECK: shard.shard %{{.*}} annotate_for_users : tensor<1024x512xbf16>
// CHECK: shard.all_slice %{{.*}} slice_axis = 0 : tensor<512x512xbf16> -> tensor<256x512xbf16>
// CHECK: fp8.linear {{.*}} -> tensor<1024x256xbf16>
// CHECK: shard.all_slice %{{.*}} slice_axis = 1 : tensor<1024x512xbf16> -> tensor<1024x256xbf16>
// CHECK: fp8.linear_backward {{.*}} -> (tensor<1024x512xf32>, tensor<256x512xf32>)
// CHECK: shard.reduce_scatter {{.*}} scatter_axis = 0 : tensor<1024x512xf32> -> tensor<512x512xf32>
func.func @column_blockwise(%x: tensor<1024x512xbf16>, %w: tensor<512x512xbf16>, %dy: tensor<1024x512xbf16>) -> (tensor<1024x512xbf16>, tensor<1024x512xbf16>, tensor<512x512xf32>) {
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>} : (tensor<1024x512xbf16>, tensor<512x512xbf16>) -> tensor<1024x512xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.blockwise<>} : (tensor<1024x512xbf16>, tensor<512x512xbf16>, tensor<1024x512xbf16>) -> (tensor<1024x512xbf16>, tensor<512x512xf32>)
  return %y, %dx, %dw : tensor<1024x512xbf16>, tensor<1024x512xbf16>, tensor<512x512xf32>
}

// -----

// MXFP8: 1x32 / 32x1 blocks, shards of 64 rows and columns keep them whole.
// CHECK-LABEL: func.func @column_mxfp8
// CHECK-NOT: shard.all_reduce
// CHECK: shard.shard %{{.*}} annotate_for_users : tensor<128x128xbf16>
// CHECK: shard.all_slice %{{.*}} slice_axis = 0 : tensor<128x128xbf16> -> tensor<64x128xbf16>
// CHECK: fp8.linear {{.*}} -> tensor<128x64xbf16>
// CHECK: fp8.linear_backward
// CHECK: shard.reduce_scatter
func.func @column_mxfp8(%x: tensor<128x128xbf16>, %w: tensor<128x128xbf16>, %dy: tensor<128x128xbf16>) -> (tensor<128x128xbf16>, tensor<128x128xbf16>, tensor<128x128xf32>) {
  %y = fp8.linear %x, %w {recipe = #fp8.mxfp8<>} : (tensor<128x128xbf16>, tensor<128x128xbf16>) -> tensor<128x128xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.mxfp8<>} : (tensor<128x128xbf16>, tensor<128x128xbf16>, tensor<128x128xbf16>) -> (tensor<128x128xbf16>, tensor<128x128xf32>)
  return %y, %dx, %dw : tensor<128x128xbf16>, tensor<128x128xbf16>, tensor<128x128xf32>
}

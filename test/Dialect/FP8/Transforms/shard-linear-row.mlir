// RUN: fp8-opt %s -split-input-file -fp8-shard-linear="mode=row world-size=2" | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-shard-linear="mode=row world-size=2 sequence-parallel=false f32-partials=false" | FileCheck %s --check-prefix=NOSP

// Row-parallel with sequence parallelism, current scaling: X and W are the
// device's columns (K), quantized with the whole tensors' scales; the f32
// partial Y is reduce-scattered over the tokens, the bias added once, then
// rounded; dY (token shard) is annotated for the FP8 all-gather.
// CHECK: shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @row_current
// CHECK-SAME: -> (tensor<512x256xbf16>, tensor<1024x256xbf16>, tensor<256x256xf32>)
// CHECK: %[[XL:[^ ,]*]] = shard.all_slice %{{.*}} on @tp grid_axes = [0] slice_axis = 1 : tensor<1024x512xbf16> -> tensor<1024x256xbf16>
// CHECK: %[[AX:[^ ,]*]] = fp8.amax %[[XL]]
// CHECK: shard.all_reduce %[[AX]] on @tp grid_axes = [0] reduction = max
// CHECK: %[[WL:[^ ,]*]] = shard.all_slice %{{.*}} slice_axis = 1 : tensor<256x512xbf16> -> tensor<256x256xbf16>
// CHECK: %[[AW:[^ ,]*]] = fp8.amax %[[WL]]
// CHECK: shard.all_reduce %[[AW]] on @tp grid_axes = [0] reduction = max
// CHECK: %[[YP:[^ ,]*]] = fp8.linear %[[XL]], %[[WL]] scales({{.*}}) {{.*}} -> tensor<1024x256xf32>
// CHECK: %[[YR:[^ ,]*]] = shard.reduce_scatter %[[YP]] on @tp grid_axes = [0] scatter_axis = 0 : tensor<1024x256xf32> -> tensor<512x256xf32>
// CHECK: %[[BB:[^ ,]*]] = linalg.broadcast ins(%{{.*}} : tensor<256xf32>) outs(%{{.*}} : tensor<512x256xf32>) dimensions = [0]
// CHECK: %[[YB:[^ ,]*]] = arith.addf %[[YR]], %[[BB]] : tensor<512x256xf32>
// CHECK: %[[Y:[^ ,]*]] = arith.truncf %[[YB]] : tensor<512x256xf32> to tensor<512x256xbf16>
// CHECK: %[[DYL:[^ ,]*]] = shard.all_slice %[[DY:[^ ,]*]] {{.*}} slice_axis = 0 : tensor<1024x256xbf16> -> tensor<512x256xbf16>
// CHECK: %[[ADY:[^ ,]*]] = fp8.amax %[[DYL]]
// CHECK: shard.all_reduce %[[ADY]] on @tp grid_axes = [0] reduction = max
// CHECK: %[[SDY:[^ ,]*]] = shard.sharding @tp split_axes = {{\[\[}}0]]
// CHECK: %[[DYA:[^ ,]*]] = shard.shard %[[DY]] to %[[SDY]] annotate_for_users : tensor<1024x256xbf16>
// CHECK: %[[DX:[^ ,]*]], %[[DW:[^ ,]*]] = fp8.linear_backward %[[XL]], %[[WL]], %[[DYA]] scales({{.*}}) {{.*}} -> (tensor<1024x256xbf16>, tensor<256x256xf32>)
// CHECK-NOT: shard.
// CHECK: return %[[Y]], %[[DX]], %[[DW]]

// Without sequence parallelism dY is whole and the partial Y is all-reduced
// in the layer's type (bf16, as Megatron-Core reduces it); the bias is
// still added once.
// NOSP-LABEL: func.func @row_current
// NOSP-SAME: -> (tensor<1024x256xbf16>, tensor<1024x256xbf16>, tensor<256x256xf32>)
// NOSP: %[[YP:[^ ,]*]] = fp8.linear {{.*}} -> tensor<1024x256xbf16>
// NOSP: %[[YR:[^ ,]*]] = shard.all_reduce %[[YP]] on @tp grid_axes = [0] : tensor<1024x256xbf16> -> tensor<1024x256xbf16>
// NOSP: arith.truncf %{{.*}} : tensor<256xf32> to tensor<256xbf16>
// NOSP: linalg.broadcast
// NOSP: arith.addf %[[YR]]
// NOSP-NOT: shard.shard
// NOSP: %[[ADY:[^ ,]*]] = fp8.amax %arg3 :
// NOSP-NOT: shard.all_reduce %[[ADY]]
// NOSP: fp8.linear_backward %{{.*}}, %{{.*}}, %arg3
func.func @row_current(%x: tensor<1024x512xbf16>, %w: tensor<256x512xbf16>, %b: tensor<256xf32>, %dy: tensor<1024x256xbf16>) -> (tensor<1024x256xbf16>, tensor<1024x512xbf16>, tensor<256x512xf32>) {
  %y = fp8.linear %x, %w bias %b {recipe = #fp8.current<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>, tensor<256xf32>) -> tensor<1024x256xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>, tensor<1024x256xbf16>) -> (tensor<1024x512xbf16>, tensor<256x512xf32>)
  return %y, %dx, %dw : tensor<1024x256xbf16>, tensor<1024x512xbf16>, tensor<256x512xf32>
}

// -----

// Delayed: the amaxes of X's and W's column shards are max-all-reduced;
// dY's (gathered) is fp8-shard-quantize's.
// CHECK-LABEL: func.func @row_delayed
// CHECK: %{{.*}}, %[[AMAX:[^ ,]*]]:2 = fp8.linear
// CHECK: shard.reduce_scatter
// CHECK: %[[AXR:[^ ,]*]] = shard.all_reduce %[[AMAX]]#0 on @tp grid_axes = [0] reduction = max
// CHECK: %[[AWR:[^ ,]*]] = shard.all_reduce %[[AMAX]]#1 on @tp grid_axes = [0] reduction = max
// CHECK: %{{.*}}, %{{.*}}, %[[ADY:[^ ,]*]] = fp8.linear_backward
// CHECK-NOT: shard.all_reduce
// CHECK: return {{.*}}, %[[AXR]], %[[AWR]], %[[ADY]]
func.func @row_delayed(%x: tensor<1024x512xbf16>, %w: tensor<256x512xbf16>, %dy: tensor<1024x256xbf16>, %sx: tensor<f32>, %sw: tensor<f32>, %sdy: tensor<f32>) -> (tensor<1024x256xbf16>, tensor<1024x512xbf16>, tensor<256x512xf32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %y, %ax, %aw = fp8.linear %x, %w scales(%sx, %sw) {recipe = #fp8.delayed<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>, tensor<f32>, tensor<f32>) -> (tensor<1024x256xbf16>, tensor<f32>, tensor<f32>)
  %dx, %dw, %ady = fp8.linear_backward %x, %w, %dy scales(%sx, %sw, %sdy) {recipe = #fp8.delayed<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>, tensor<1024x256xbf16>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<1024x512xbf16>, tensor<256x512xf32>, tensor<f32>)
  return %y, %dx, %dw, %ax, %aw, %ady : tensor<1024x256xbf16>, tensor<1024x512xbf16>, tensor<256x512xf32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// Blockwise with K/T = 256 (whole 128-blocks along K): local, no amax.
// CHECK-LABEL: func.func @row_blockwise
// CHECK-NOT: shard.all_reduce
// CHECK: shard.all_slice %{{.*}} slice_axis = 1 : tensor<1024x512xbf16> -> tensor<1024x256xbf16>
// CHECK: shard.all_slice %{{.*}} slice_axis = 1 : tensor<256x512xbf16> -> tensor<256x256xbf16>
// CHECK: fp8.linear {{.*}} -> tensor<1024x256xf32>
// CHECK: shard.reduce_scatter
// CHECK: arith.truncf
// CHECK: shard.shard %{{.*}} annotate_for_users : tensor<1024x256xbf16>
// CHECK: fp8.linear_backward
func.func @row_blockwise(%x: tensor<1024x512xbf16>, %w: tensor<256x512xbf16>, %dy: tensor<1024x256xbf16>) -> (tensor<1024x256xbf16>, tensor<1024x512xbf16>, tensor<256x512xf32>) {
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>) -> tensor<1024x256xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.blockwise<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>, tensor<1024x256xbf16>) -> (tensor<1024x512xbf16>, tensor<256x512xf32>)
  return %y, %dx, %dw : tensor<1024x256xbf16>, tensor<1024x512xbf16>, tensor<256x512xf32>
}

// -----

// MXFP8, K/T = 64: whole 1x32 blocks.
// CHECK-LABEL: func.func @row_mxfp8
// CHECK-NOT: shard.all_reduce
// CHECK: fp8.linear {{.*}} -> tensor<128x128xf32>
// CHECK: shard.reduce_scatter
func.func @row_mxfp8(%x: tensor<128x128xbf16>, %w: tensor<128x128xbf16>) -> tensor<128x128xbf16> {
  %y = fp8.linear %x, %w {recipe = #fp8.mxfp8<>} : (tensor<128x128xbf16>, tensor<128x128xbf16>) -> tensor<128x128xbf16>
  return %y : tensor<128x128xbf16>
}

// RUN: fp8-opt %s -split-input-file -fp8-shard-linear="mode=dp world-size=4" | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-shard-linear="mode=dp world-size=4" -fp8-attach-target=chip=sm_90a -fp8-expand-linear -fp8-shard-quantize | FileCheck %s --check-prefix=PIPE

// ZeRO-1 FP8 primary weights: W (the device holds a shard of its rows) is
// annotated for the sharded quantization and FP8 all-gather; X and dY are
// the device's own batch; the weight gradient is reduce-scattered (sum) to
// the optimizer shards.
// CHECK: shard.grid @dp(shape = 4)
// CHECK-LABEL: func.func @dp_current
// CHECK-SAME: -> (tensor<1024x512xbf16>, tensor<1024x256xbf16>, tensor<128x256xf32>)
// CHECK-NOT: fp8.amax
// CHECK: %[[S:.*]] = shard.sharding @dp split_axes = {{\[\[}}0]]
// CHECK: %[[WA:.*]] = shard.shard %{{.*}} to %[[S]] annotate_for_users : tensor<512x256xf32>
// CHECK: %[[Y:.*]] = fp8.linear %{{.*}}, %[[WA]] {recipe = #fp8.current<>}
// CHECK: %[[DX:.*]], %[[DW:.*]] = fp8.linear_backward %{{.*}}, %[[WA]], %{{.*}} {recipe = #fp8.current<>}
// CHECK: %[[DWR:.*]] = shard.reduce_scatter %[[DW]] on @dp grid_axes = [0] scatter_axis = 0 : tensor<512x256xf32> -> tensor<128x256xf32>
// CHECK: return %[[Y]], %[[DX]], %[[DWR]]

// After expansion (sm_90a): the local amax of the weight shard, the global
// max, the shard quantized rowwise and columnwise (transposed), the rowwise
// FP8 all-gather before fprop, the columnwise one before dgrad.
// PIPE-LABEL: func.func @dp_current
// PIPE: %[[WL:.*]] = shard.all_slice %{{.*}} on @dp grid_axes = [0] slice_axis = 0 : tensor<512x256xf32> -> tensor<128x256xf32>
// PIPE: %[[A:.*]] = fp8.amax %[[WL]]
// PIPE: %[[AR:.*]] = shard.all_reduce %[[A]] on @dp grid_axes = [0] reduction = max
// PIPE: fp8.compute_scale %[[AR]]
// PIPE: %[[Q:.*]], %{{.*}}, %[[QT:.*]], %{{.*}} = fp8.quantize %[[WL]] scale {{.*}} -> rowwise(tensor<128x256xf8E4M3FN>, tensor<f32>) columnwise(tensor<256x128xf8E4M3FN>, tensor<f32>)
// PIPE: %[[G:.*]] = shard.all_gather %[[Q]] on @dp grid_axes = [0] gather_axis = 0 : tensor<128x256xf8E4M3FN> -> tensor<512x256xf8E4M3FN>
// PIPE: fp8.scaled_matmul %{{.*}}, %[[G]]
// PIPE: %[[GT:.*]] = shard.all_gather %[[QT]] on @dp grid_axes = [0] gather_axis = 1 : tensor<256x128xf8E4M3FN> -> tensor<256x512xf8E4M3FN>
// PIPE: fp8.scaled_matmul %{{.*}}, %[[GT]]
// PIPE: fp8.scaled_matmul
// PIPE: shard.reduce_scatter
func.func @dp_current(%x: tensor<1024x256xbf16>, %w: tensor<512x256xf32>, %dy: tensor<1024x512xbf16>) -> (tensor<1024x512xbf16>, tensor<1024x256xbf16>, tensor<512x256xf32>) {
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<1024x256xbf16>, tensor<512x256xf32>) -> tensor<1024x512xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>} : (tensor<1024x256xbf16>, tensor<512x256xf32>, tensor<1024x512xbf16>) -> (tensor<1024x256xbf16>, tensor<512x256xf32>)
  return %y, %dx, %dw : tensor<1024x512xbf16>, tensor<1024x256xbf16>, tensor<512x256xf32>
}

// -----

// Blockwise: shards of 128 rows hold whole 128x128 tiles: the FP8 data and
// the tile scales are gathered, no amax is reduced.
// CHECK-LABEL: func.func @dp_blockwise
// CHECK: shard.shard %{{.*}} annotate_for_users : tensor<512x256xf32>
// CHECK: shard.reduce_scatter
// PIPE-LABEL: func.func @dp_blockwise
// PIPE-NOT: shard.all_reduce
// PIPE: %[[Q:.*]], %[[S:.*]], %[[QT:.*]], %[[ST:.*]] = fp8.quantize {{.*}} -> rowwise(tensor<128x256xf8E4M3FN>, tensor<1x2xf32>) columnwise(tensor<256x128xf8E4M3FN>, tensor<2x1xf32>)
// PIPE: shard.all_gather %[[Q]] {{.*}} gather_axis = 0
// PIPE: shard.all_gather %[[S]] {{.*}} gather_axis = 0 : tensor<1x2xf32> -> tensor<4x2xf32>
// PIPE: fp8.scaled_matmul
// PIPE: shard.all_gather %[[QT]] {{.*}} gather_axis = 1
// PIPE: shard.all_gather %[[ST]] {{.*}} gather_axis = 1 : tensor<2x1xf32> -> tensor<2x4xf32>
// PIPE: fp8.scaled_matmul
func.func @dp_blockwise(%x: tensor<1024x256xbf16>, %w: tensor<512x256xf32>, %dy: tensor<1024x512xbf16>) -> (tensor<1024x512xbf16>, tensor<1024x256xbf16>, tensor<512x256xf32>) {
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>} : (tensor<1024x256xbf16>, tensor<512x256xf32>) -> tensor<1024x512xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.blockwise<>} : (tensor<1024x256xbf16>, tensor<512x256xf32>, tensor<1024x512xbf16>) -> (tensor<1024x256xbf16>, tensor<512x256xf32>)
  return %y, %dx, %dw : tensor<1024x512xbf16>, tensor<1024x256xbf16>, tensor<512x256xf32>
}

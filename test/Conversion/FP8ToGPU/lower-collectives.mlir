// RUN: fp8-opt %s -split-input-file -fp8-lower-collectives | FileCheck %s

// Each collective becomes an fp8.launch of a declaration tagged
// fp8.collective (kind, grid, axes, group size, reduction) that reads its
// input and writes a new tensor; one declaration per collective and types.
shard.grid @tp(shape = 2)
// CHECK-DAG: func.func private @fp8_all_slice_tp(memref<4096x1024xbf16> {bufferization.access = "read"}, memref<2048x1024xbf16> {bufferization.access = "write"}) attributes {fp8.collective = {grid = @tp, grid_axes = array<i64: 0>, group_size = 2 : i64, kind = "all_slice"}}
// CHECK-DAG: func.func private @fp8_all_reduce_tp(memref<f32> {bufferization.access = "read"}, memref<f32> {bufferization.access = "write"}) attributes {fp8.collective = {grid = @tp, grid_axes = array<i64: 0>, group_size = 2 : i64, kind = "all_reduce", reduction = "max"}}
// CHECK-DAG: func.func private @fp8_all_gather_tp(memref<2048x1024xf8E4M3FN> {{.*}}, memref<4096x1024xf8E4M3FN> {{.*}}) attributes {fp8.collective = {grid = @tp, grid_axes = array<i64: 0>, group_size = 2 : i64, kind = "all_gather"}}
// CHECK-DAG: func.func private @fp8_reduce_scatter_tp(memref<4096x256xf32> {{.*}}, memref<2048x256xf32> {{.*}}) attributes {fp8.collective = {grid = @tp, grid_axes = array<i64: 0>, group_size = 2 : i64, kind = "reduce_scatter", reduction = "sum"}}
// CHECK-LABEL: func.func @collectives
// CHECK-NOT: shard.all
// CHECK: %[[SE:.*]] = tensor.empty() : tensor<2048x1024xbf16>
// CHECK: %[[S:.*]] = fp8.launch @fp8_all_slice_tp(%{{.*}}, %[[SE]]) outputs [1]
// CHECK: %[[A:.*]] = fp8.amax %[[S]]
// CHECK: %[[G:.*]] = fp8.launch @fp8_all_reduce_tp(%[[A]], %{{.*}}) outputs [1] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: fp8.launch @fp8_all_gather_tp(%{{.*}}, %{{.*}}) outputs [1] : (tensor<2048x1024xf8E4M3FN>, tensor<4096x1024xf8E4M3FN>) -> tensor<4096x1024xf8E4M3FN>
// CHECK: fp8.launch @fp8_reduce_scatter_tp(
// CHECK: return %[[G]]
func.func @collectives(%x: tensor<4096x1024xbf16>, %q: tensor<2048x1024xf8E4M3FN>, %p: tensor<4096x256xf32>) -> (tensor<f32>, tensor<4096x1024xf8E4M3FN>, tensor<2048x256xf32>) {
  %r = shard.all_slice %x on @tp grid_axes = [0] slice_axis = 0 : tensor<4096x1024xbf16> -> tensor<2048x1024xbf16>
  %a = fp8.amax %r : tensor<2048x1024xbf16> -> tensor<f32>
  %g = shard.all_reduce %a on @tp grid_axes = [0] reduction = max : tensor<f32> -> tensor<f32>
  %w = shard.all_gather %q on @tp grid_axes = [0] gather_axis = 0 : tensor<2048x1024xf8E4M3FN> -> tensor<4096x1024xf8E4M3FN>
  %s = shard.reduce_scatter %p on @tp grid_axes = [0] scatter_axis = 0 : tensor<4096x256xf32> -> tensor<2048x256xf32>
  return %g, %w, %s : tensor<f32>, tensor<4096x1024xf8E4M3FN>, tensor<2048x256xf32>
}

// -----

// A group on one axis of a 2x4 grid has 4 devices; two gathers of other
// types get declarations of their own. A leading extent of 1 keeps the
// pieces contiguous.
shard.grid @grid(shape = 2x4)
// CHECK-DAG: func.func private @fp8_all_gather_grid(memref<128x64xf32> {{.*}} attributes {fp8.collective = {grid = @grid, grid_axes = array<i64: 1>, group_size = 4 : i64, kind = "all_gather"}}
// CHECK-DAG: func.func private @fp8_all_gather_grid_1(memref<1x64xbf16> {{.*}}, memref<1x256xbf16> {{.*}})
// CHECK-LABEL: func.func @grid_axis
// CHECK: fp8.launch @fp8_all_gather_grid(
// CHECK: fp8.launch @fp8_all_gather_grid_1(
func.func @grid_axis(%a: tensor<128x64xf32>, %b: tensor<1x64xbf16>) -> (tensor<512x64xf32>, tensor<1x256xbf16>) {
  %ga = shard.all_gather %a on @grid grid_axes = [1] gather_axis = 0 : tensor<128x64xf32> -> tensor<512x64xf32>
  %gb = shard.all_gather %b on @grid grid_axes = [1] gather_axis = 1 : tensor<1x64xbf16> -> tensor<1x256xbf16>
  return %ga, %gb : tensor<512x64xf32>, tensor<1x256xbf16>
}

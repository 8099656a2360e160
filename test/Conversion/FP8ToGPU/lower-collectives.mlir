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

// -----

// Along an inner dimension a device's piece is `rows` strided runs. A
// slice is one strided copy at the device's column block (slice_grid: the
// rank selects it); an all-gather moves a contiguous [2, rows, cols/2]
// buffer, then one copy per piece puts it in place; a reduce-scatter copies
// each piece into such a buffer first. Offsets and pitches in elements; the
// copies write into one tensor in turn (read-write: the rest is kept).
shard.grid @tp(shape = 2)
// CHECK-DAG: func.func private @fp8_copy2d(memref<128x256xbf16> {bufferization.access = "read"}, memref<128x128xbf16> {bufferization.access = "read-write"}) attributes {fp8.collective = {kind = "copy2d", row_elements = 128 : i64, rows = 128 : i64, slice_grid = @tp, slice_grid_axes = array<i64: 0>, slice_group_size = 2 : i64, source_offset = 0 : i64, source_pitch = 256 : i64, target_offset = 0 : i64, target_pitch = 128 : i64}}
// CHECK-DAG: func.func private @fp8_all_gather_tp(memref<64x32xf8E4M3FN> {{.*}}, memref<2x64x32xf8E4M3FN> {{.*}}) attributes {fp8.collective = {grid = @tp, grid_axes = array<i64: 0>, group_size = 2 : i64, kind = "all_gather"}}
// CHECK-DAG: func.func private @[[G0:fp8_copy2d_[0-9]+]](memref<2x64x32xf8E4M3FN> {{.*}}, memref<64x64xf8E4M3FN> {{.*}}) attributes {fp8.collective = {kind = "copy2d", row_elements = 32 : i64, rows = 64 : i64, source_offset = 0 : i64, source_pitch = 32 : i64, target_offset = 0 : i64, target_pitch = 64 : i64}}
// CHECK-DAG: func.func private @[[G1:fp8_copy2d_[0-9]+]](memref<2x64x32xf8E4M3FN> {{.*}}, memref<64x64xf8E4M3FN> {{.*}}) attributes {fp8.collective = {kind = "copy2d", row_elements = 32 : i64, rows = 64 : i64, source_offset = 2048 : i64, source_pitch = 32 : i64, target_offset = 32 : i64, target_pitch = 64 : i64}}
// CHECK-DAG: func.func private @[[S0:fp8_copy2d_[0-9]+]](memref<16x64xf32> {{.*}}, memref<2x16x32xf32> {{.*}}) attributes {fp8.collective = {kind = "copy2d", row_elements = 32 : i64, rows = 16 : i64, source_offset = 0 : i64, source_pitch = 64 : i64, target_offset = 0 : i64, target_pitch = 32 : i64}}
// CHECK-DAG: func.func private @[[S1:fp8_copy2d_[0-9]+]](memref<16x64xf32> {{.*}}, memref<2x16x32xf32> {{.*}}) attributes {fp8.collective = {kind = "copy2d", row_elements = 32 : i64, rows = 16 : i64, source_offset = 32 : i64, source_pitch = 64 : i64, target_offset = 512 : i64, target_pitch = 32 : i64}}
// CHECK-DAG: func.func private @fp8_reduce_scatter_tp(memref<2x16x32xf32> {{.*}}, memref<16x32xf32> {{.*}})
// CHECK-LABEL: func.func @inner
// CHECK: %[[R:.*]] = fp8.launch @fp8_copy2d(%{{.*}}, %{{.*}}) outputs [1] : (tensor<128x256xbf16>, tensor<128x128xbf16>) -> tensor<128x128xbf16>
// CHECK: %[[ST:.*]] = fp8.launch @fp8_all_gather_tp(%{{.*}}, %{{.*}}) outputs [1] : (tensor<64x32xf8E4M3FN>, tensor<2x64x32xf8E4M3FN>) -> tensor<2x64x32xf8E4M3FN>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64x64xf8E4M3FN>
// CHECK: %[[P0:.*]] = fp8.launch @[[G0]](%[[ST]], %[[E]]) outputs [1]
// CHECK: %[[G:.*]] = fp8.launch @[[G1]](%[[ST]], %[[P0]]) outputs [1]
// CHECK: %[[SE:.*]] = tensor.empty() : tensor<2x16x32xf32>
// CHECK: %[[Q0:.*]] = fp8.launch @[[S0]](%{{.*}}, %[[SE]]) outputs [1]
// CHECK: %[[Q1:.*]] = fp8.launch @[[S1]](%{{.*}}, %[[Q0]]) outputs [1]
// CHECK: %[[S:.*]] = fp8.launch @fp8_reduce_scatter_tp(%[[Q1]], %{{.*}}) outputs [1] : (tensor<2x16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
// CHECK: return %[[R]], %[[G]], %[[S]]
func.func @inner(%x: tensor<128x256xbf16>, %q: tensor<64x32xf8E4M3FN>, %p: tensor<16x64xf32>) -> (tensor<128x128xbf16>, tensor<64x64xf8E4M3FN>, tensor<16x32xf32>) {
  %r = shard.all_slice %x on @tp grid_axes = [0] slice_axis = 1 : tensor<128x256xbf16> -> tensor<128x128xbf16>
  %g = shard.all_gather %q on @tp grid_axes = [0] gather_axis = 1 : tensor<64x32xf8E4M3FN> -> tensor<64x64xf8E4M3FN>
  %s = shard.reduce_scatter %p on @tp grid_axes = [0] scatter_axis = 1 : tensor<16x64xf32> -> tensor<16x32xf32>
  return %r, %g, %s : tensor<128x128xbf16>, tensor<64x64xf8E4M3FN>, tensor<16x32xf32>
}

// -----

// Three dimensions gathered along the last: rows = 2 * 8 (the extents
// before the axis), each row 16 of the whole's 32 elements.
shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @rank3
// CHECK: fp8.launch @fp8_all_gather_tp{{.*}} : (tensor<2x8x16xbf16>, tensor<2x16x16xbf16>) -> tensor<2x16x16xbf16>
// CHECK: fp8.launch @fp8_copy2d{{.*}} : (tensor<2x16x16xbf16>, tensor<2x8x32xbf16>) -> tensor<2x8x32xbf16>
// CHECK: fp8.launch @fp8_copy2d{{.*}} : (tensor<2x16x16xbf16>, tensor<2x8x32xbf16>) -> tensor<2x8x32xbf16>
func.func @rank3(%q: tensor<2x8x16xbf16>) -> tensor<2x8x32xbf16> {
  %g = shard.all_gather %q on @tp grid_axes = [0] gather_axis = 2 : tensor<2x8x16xbf16> -> tensor<2x8x32xbf16>
  return %g : tensor<2x8x32xbf16>
}

// RUN: fp8-opt %s -split-input-file -fp8-shard-quantize | FileCheck %s

// Per-tensor current scaling of a sequence shard (tensor parallelism with
// sequence parallelism, 2 devices): the shard's amax is max-all-reduced
// before the scale; rowwise data gathered along the tokens, the transposed
// columnwise data along its columns; the scales are already equal.
shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @current_sequence_shard
// CHECK-SAME: (%[[X:.*]]: tensor<4096x1024xbf16>)
// CHECK-NOT: shard.shard
// CHECK: %[[XR:.*]] = shard.all_slice %[[X]] on @tp grid_axes = [0] slice_axis = 0 : tensor<4096x1024xbf16> -> tensor<2048x1024xbf16>
// CHECK: %[[A:.*]] = fp8.amax %[[XR]] : tensor<2048x1024xbf16> -> tensor<f32>
// CHECK: %[[AG:.*]] = shard.all_reduce %[[A]] on @tp grid_axes = [0] reduction = max : tensor<f32> -> tensor<f32>
// CHECK: %[[S:.*]], %{{.*}} = fp8.compute_scale %[[AG]] {element_type = f8E4M3FN, recipe = #fp8.current<>}
// CHECK: %[[Q:.*]], %[[QS:.*]], %[[QT:.*]], %[[QTS:.*]] = fp8.quantize %[[XR]] scale %[[S]] {{.*}} -> rowwise(tensor<2048x1024xf8E4M3FN>, tensor<f32>) columnwise(tensor<1024x2048xf8E4M3FN>, tensor<f32>)
// CHECK: %[[G:.*]] = shard.all_gather %[[Q]] on @tp grid_axes = [0] gather_axis = 0 : tensor<2048x1024xf8E4M3FN> -> tensor<4096x1024xf8E4M3FN>
// CHECK: %[[GT:.*]] = shard.all_gather %[[QT]] on @tp grid_axes = [0] gather_axis = 1 : tensor<1024x2048xf8E4M3FN> -> tensor<1024x4096xf8E4M3FN>
// CHECK: return %[[G]], %[[QS]], %[[GT]], %[[QTS]], %[[AG]]
func.func @current_sequence_shard(%x: tensor<4096x1024xbf16>) -> (tensor<4096x1024xf8E4M3FN>, tensor<f32>, tensor<1024x4096xf8E4M3FN>, tensor<f32>, tensor<f32>) {
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<4096x1024xbf16>
  %q, %qs, %qt, %qts, %a = fp8.quantize %xs {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>} : tensor<4096x1024xbf16> -> rowwise(tensor<4096x1024xf8E4M3FN>, tensor<f32>) columnwise(tensor<1024x4096xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
  return %q, %qs, %qt, %qts, %a : tensor<4096x1024xf8E4M3FN>, tensor<f32>, tensor<1024x4096xf8E4M3FN>, tensor<f32>, tensor<f32>
}

// -----

// Delayed scaling: every shard uses the given scale; the amax to record is
// the max over the grid.
shard.grid @dp(shape = 4)
// CHECK-LABEL: func.func @delayed_weight_shard
// CHECK: %[[WR:.*]] = shard.all_slice %{{.*}} on @dp grid_axes = [0] slice_axis = 0 : tensor<1024x512xf32> -> tensor<256x512xf32>
// CHECK-NOT: fp8.amax
// CHECK: %[[Q:.*]], %{{.*}}, %[[A:.*]] = fp8.quantize %[[WR]] scale %{{.*}} {{.*}} -> rowwise(tensor<256x512xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
// CHECK-DAG: shard.all_gather %[[Q]] on @dp grid_axes = [0] gather_axis = 0 : tensor<256x512xf8E4M3FN> -> tensor<1024x512xf8E4M3FN>
// CHECK-DAG: shard.all_reduce %[[A]] on @dp grid_axes = [0] reduction = max
func.func @delayed_weight_shard(%w: tensor<1024x512xf32>, %scale: tensor<f32>) -> (tensor<1024x512xf8E4M3FN>, tensor<f32>, tensor<f32>) {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %ws = shard.shard %w to %s annotate_for_users : tensor<1024x512xf32>
  %q, %qs, %a = fp8.quantize %ws scale %scale {recipe = #fp8.delayed<history = 16>, granularity = #fp8.granularity<tensor>} : tensor<1024x512xf32>, tensor<f32> -> rowwise(tensor<1024x512xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
  return %q, %qs, %a : tensor<1024x512xf8E4M3FN>, tensor<f32>, tensor<f32>
}

// -----

// 128x128 weight tiles, shards of 512 rows: no tile is cut, so there is no
// amax reduction; the data and the tile scales are gathered.
shard.grid @grid(shape = 2x2)
// CHECK-LABEL: func.func @blockwise_weight_rows
// CHECK-NOT: shard.all_reduce
// CHECK: %[[Q:.*]], %[[S:.*]] = fp8.quantize %{{.*}} {{.*}} -> rowwise(tensor<512x512xf8E4M3FN>, tensor<4x4xf32>)
// CHECK: shard.all_gather %[[Q]] on @grid grid_axes = [1] gather_axis = 0 : tensor<512x512xf8E4M3FN> -> tensor<1024x512xf8E4M3FN>
// CHECK: shard.all_gather %[[S]] on @grid grid_axes = [1] gather_axis = 0 : tensor<4x4xf32> -> tensor<8x4xf32>
func.func @blockwise_weight_rows(%w: tensor<1024x512xbf16>) -> (tensor<1024x512xf8E4M3FN>, tensor<8x4xf32>) {
  %s = shard.sharding @grid split_axes = [[1]] : !shard.sharding
  %ws = shard.shard %w to %s annotate_for_users : tensor<1024x512xbf16>
  %q, %qs = fp8.quantize %ws {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>} : tensor<1024x512xbf16> -> rowwise(tensor<1024x512xf8E4M3FN>, tensor<8x4xf32>)
  return %q, %qs : tensor<1024x512xf8E4M3FN>, tensor<8x4xf32>
}

// -----

// 1x128 activation tiles on a sequence shard of 256 tokens: rowwise tiles
// lie along K (local), the columnwise ones span 128 tokens (256 is a
// multiple): both quantize locally.
shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @blockwise_sequence_shard
// CHECK-NOT: shard.all_reduce
// CHECK: %[[Q:.*]], %[[S:.*]], %[[QT:.*]], %[[ST:.*]] = fp8.quantize %{{.*}} -> rowwise(tensor<256x512xf8E4M3FN>, tensor<256x4xf32>) columnwise(tensor<512x256xf8E4M3FN>, tensor<512x2xf32>)
// CHECK: shard.all_gather %[[Q]] {{.*}} gather_axis = 0 : tensor<256x512xf8E4M3FN> -> tensor<512x512xf8E4M3FN>
// CHECK: shard.all_gather %[[S]] {{.*}} gather_axis = 0 : tensor<256x4xf32> -> tensor<512x4xf32>
// CHECK: shard.all_gather %[[QT]] {{.*}} gather_axis = 1 : tensor<512x256xf8E4M3FN> -> tensor<512x512xf8E4M3FN>
// CHECK: shard.all_gather %[[ST]] {{.*}} gather_axis = 1 : tensor<512x2xf32> -> tensor<512x4xf32>
func.func @blockwise_sequence_shard(%x: tensor<512x512xbf16>) -> (tensor<512x512xf8E4M3FN>, tensor<512x4xf32>, tensor<512x512xf8E4M3FN>, tensor<512x4xf32>) {
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<512x512xbf16>
  %q, %qs, %qt, %qts = fp8.quantize %xs {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<512x512xbf16> -> rowwise(tensor<512x512xf8E4M3FN>, tensor<512x4xf32>) columnwise(tensor<512x512xf8E4M3FN>, tensor<512x4xf32>)
  return %q, %qs, %qt, %qts : tensor<512x512xf8E4M3FN>, tensor<512x4xf32>, tensor<512x512xf8E4M3FN>, tensor<512x4xf32>
}

// -----

// MXFP8 on a shard along K of 64 columns (row-parallel input): the 1x32
// blocks stay whole; the UE8M0 scales are gathered with the data.
shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @mx_k_shard
// CHECK: fp8.quantize %{{.*}} -> rowwise(tensor<128x64xf8E4M3FN>, tensor<128x2xf8E8M0FNU>)
// CHECK: shard.all_gather %{{.*}} gather_axis = 1 : tensor<128x64xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
// CHECK: shard.all_gather %{{.*}} gather_axis = 1 : tensor<128x2xf8E8M0FNU> -> tensor<128x4xf8E8M0FNU>
func.func @mx_k_shard(%x: tensor<128x128xbf16>) -> (tensor<128x128xf8E4M3FN>, tensor<128x4xf8E8M0FNU>) {
  %s = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<128x128xbf16>
  %q, %qs = fp8.quantize %xs {recipe = #fp8.mxfp8<>, granularity = #fp8.granularity<mx 1x32>} : tensor<128x128xbf16> -> rowwise(tensor<128x128xf8E4M3FN>, tensor<128x4xf8E8M0FNU>)
  return %q, %qs : tensor<128x128xf8E4M3FN>, tensor<128x4xf8E8M0FNU>
}

// -----

// A layer input annotated along its tokens, expanded for sm_90a first: the
// FP8 all-gather feeds fprop; the unannotated weight is quantized whole.
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-expand-linear -fp8-shard-quantize | FileCheck %s --check-prefix=LINEAR
shard.grid @tp(shape = 2)
// LINEAR-LABEL: func.func @linear_fprop
// LINEAR: %[[XR:.*]] = shard.all_slice %{{.*}} slice_axis = 0 : tensor<1024x512xbf16> -> tensor<512x512xbf16>
// LINEAR: %[[A:.*]] = fp8.amax %[[XR]]
// LINEAR: %[[AG:.*]] = shard.all_reduce %[[A]] on @tp grid_axes = [0] reduction = max
// LINEAR: fp8.compute_scale %[[AG]]
// LINEAR: %[[Q:.*]], %{{.*}} = fp8.quantize %[[XR]] scale
// LINEAR: %[[G:.*]] = shard.all_gather %[[Q]] on @tp grid_axes = [0] gather_axis = 0 : tensor<512x512xf8E4M3FN> -> tensor<1024x512xf8E4M3FN>
// LINEAR: fp8.scaled_matmul %[[G]]
func.func @linear_fprop(%x: tensor<1024x512xbf16>, %w: tensor<256x512xbf16>) -> tensor<1024x256xbf16> {
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<1024x512xbf16>
  %y = fp8.linear %xs, %w {recipe = #fp8.current<>} : (tensor<1024x512xbf16>, tensor<256x512xbf16>) -> tensor<1024x256xbf16>
  return %y : tensor<1024x256xbf16>
}

// RUN: fp8-opt %s -split-input-file -fp8-shard-quantize -verify-diagnostics

// 128x128 weight tiles, shards of 500 rows: the tile holding rows 384-511
// is cut between two devices.
shard.grid @dp(shape = 2)
func.func @cut_weight_tile(%w: tensor<1000x512xbf16>) -> tensor<1000x512xf8E4M3FN> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %ws = shard.shard %w to %s annotate_for_users : tensor<1000x512xbf16>
  // expected-error @below {{the rowwise output's `tile 128x128` blocks are cut by the shard boundaries (every 500 along dimension 0, not a multiple of 128): each shard's block amax would need a max all-reduce before its scale}}
  %q, %qs = fp8.quantize %ws {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>} : tensor<1000x512xbf16> -> rowwise(tensor<1000x512xf8E4M3FN>, tensor<8x4xf32>)
  return %q : tensor<1000x512xf8E4M3FN>
}

// -----

// A sequence shard of 64 tokens: the columnwise 1x128 blocks (128 tokens
// of one feature, for wgrad) are cut; the rowwise ones would be fine.
shard.grid @tp(shape = 2)
func.func @cut_columnwise_blocks(%x: tensor<128x256xbf16>) -> tensor<256x128xf8E4M3FN> {
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<128x256xbf16>
  // expected-error @below {{the columnwise output's `tile 1x128` blocks are cut by the shard boundaries (every 64 along dimension 0, not a multiple of 128)}}
  %q, %qs, %qt, %qts = fp8.quantize %xs {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf32>) columnwise(tensor<256x128xf8E4M3FN>, tensor<256x1xf32>)
  return %qt : tensor<256x128xf8E4M3FN>
}

// -----

// Per-row current scaling split along the rows' direction.
shard.grid @tp(shape = 2)
func.func @row_split_along_columns(%x: tensor<128x256xbf16>) -> tensor<128x256xf8E4M3FN> {
  %s = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<128x256xbf16>
  // expected-error @below {{the rowwise output's `row` blocks span dimension 1, which is split}}
  %q, %qs = fp8.quantize %xs {recipe = #fp8.current<>, granularity = #fp8.granularity<row>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x1xf32>)
  return %q : tensor<128x256xf8E4M3FN>
}

// -----

// Uneven shards: the upstream all-gather concatenates equal slices.
shard.grid @tp(shape = 2)
func.func @uneven(%x: tensor<128x256xbf16>) -> tensor<128x256xf8E4M3FN> {
  %s = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 100, 128] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<128x256xbf16>
  // expected-error @below {{input is sharded with explicit offsets or halos: the FP8 all-gather concatenates equal shards}}
  %q, %qs = fp8.quantize %xs {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<f32>)
  return %q : tensor<128x256xf8E4M3FN>
}

// -----

shard.grid @tp(shape = 2)
func.func @odd_rows(%x: tensor<127x256xbf16>) -> tensor<127x256xf8E4M3FN> {
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<127x256xbf16>
  // expected-error @below {{dimension 0 of the input (127) does not split into 2 equal static shards}}
  %q, %qs = fp8.quantize %xs {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>} : tensor<127x256xbf16> -> rowwise(tensor<127x256xf8E4M3FN>, tensor<f32>)
  return %q : tensor<127x256xf8E4M3FN>
}

// -----

shard.grid @grid(shape = 2x2)
func.func @two_dims(%x: tensor<128x256xbf16>) -> tensor<128x256xf8E4M3FN> {
  %s = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<128x256xbf16>
  // expected-error @below {{input must be split along exactly one dimension, not 2}}
  %q, %qs = fp8.quantize %xs {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<f32>)
  return %q : tensor<128x256xf8E4M3FN>
}

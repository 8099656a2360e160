// RUN: fp8-opt %s -split-input-file -fp8-shard-linear="mode=column world-size=2" -verify-diagnostics

// Column-parallel blockwise: N/T = 100 rows cut W's 128x128 tiles.
func.func @column_cut_weight_tile(%x: tensor<256x512xbf16>, %w: tensor<200x512xbf16>) -> tensor<256x200xbf16> {
  // expected-error @below {{as a column-parallel layer over 2 devices of @tp, W [200x512] is split along N (rows) into shards of 100, which cut its rowwise `tile 128x128` blocks (128 along N (rows)): the device's GEMMs would read blocks that start or end in another device's shard, whose scales only the whole tensor has (no exact local form); pad N (rows) to a multiple of 256 so that every shard holds whole blocks}}
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>} : (tensor<256x512xbf16>, tensor<200x512xbf16>) -> tensor<256x200xbf16>
  return %y : tensor<256x200xbf16>
}

// -----

// A token shard of 64 cuts the 128-token columnwise blocks of X that wgrad
// reads (the forward alone would be fine: 1x128 blocks lie along K).
func.func @column_cut_sequence_blocks(%x: tensor<128x512xbf16>, %w: tensor<256x512xbf16>, %dy: tensor<128x256xbf16>) -> (tensor<128x512xbf16>, tensor<256x512xf32>) {
  // expected-error @below {{X [128x512] is split along M (tokens) into shards of 64, which cut its columnwise `tile 1x128` blocks (128 along M (tokens)): a block on two devices needs its amax max-all-reduced before its scale, which fp8.quantize does not take (the runtime's sharded quantization, fp8mlir.distributed, reduces the block-amax grid); pad M (tokens) to a multiple of 256}}
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.blockwise<>} : (tensor<128x512xbf16>, tensor<256x512xbf16>, tensor<128x256xbf16>) -> (tensor<128x512xbf16>, tensor<256x512xf32>)
  return %dx, %dw : tensor<128x512xbf16>, tensor<256x512xf32>
}

// -----

// MXFP8: dY's columns (N/T = 48) cut its 1x32 blocks along N.
func.func @column_cut_mx_blocks(%x: tensor<128x128xbf16>, %w: tensor<96x128xbf16>, %dy: tensor<128x96xbf16>) -> (tensor<128x128xbf16>, tensor<96x128xf32>) {
  // expected-error @below {{dY [128x96] is split along N (columns) into shards of 48, which cut its rowwise `mx 1x32` blocks (32 along N (columns))}}
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.mxfp8<>} : (tensor<128x128xbf16>, tensor<96x128xbf16>, tensor<128x96xbf16>) -> (tensor<128x128xbf16>, tensor<96x128xf32>)
  return %dx, %dw : tensor<128x128xbf16>, tensor<96x128xf32>
}

// -----

// Per-tensor recipes take any split that divides by T, not an odd one.
func.func @column_uneven(%x: tensor<256x512xbf16>, %w: tensor<255x512xbf16>) -> tensor<256x255xbf16> {
  // expected-error @below {{as a column-parallel layer over 2 devices of @tp, W [255x512] is split along N (rows), whose size 255 is not a multiple of 2: the shard collectives concatenate equal shards; pad N (rows) to a multiple of 2}}
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<256x512xbf16>, tensor<255x512xbf16>) -> tensor<256x255xbf16>
  return %y : tensor<256x255xbf16>
}

// -----

func.func @column_dynamic_tokens(%x: tensor<?x512xbf16>, %w: tensor<256x512xbf16>) -> tensor<?x256xbf16> {
  // expected-error @below {{X [?x512] is split along M (tokens), which is dynamic: the shards must be static}}
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<?x512xbf16>, tensor<256x512xbf16>) -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}

// -----

// Y becomes the device's [M, N/T] columns: an op reading the whole Y.
func.func @column_result_used(%x: tensor<256x512xbf16>, %w: tensor<256x512xbf16>) -> tensor<256x256xbf16> {
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<256x512xbf16>, tensor<256x512xbf16>) -> tensor<256x256xbf16>
  // expected-error @below {{uses the Y of a linear layer that becomes column-parallel, whose shape changes to the device's shard: fp8-shard-linear rewrites layers whose results the function returns}}
  %z = arith.addf %y, %y : tensor<256x256xbf16>
  return %z : tensor<256x256xbf16>
}

// RUN: fp8-opt %s -split-input-file -fp8-shard-linear="mode=dp world-size=8" -verify-diagnostics

// The ZeRO-1 shard of W's 1000 rows over 8 devices would cut rows.
func.func @dp_cut_rows(%x: tensor<256x512xbf16>, %w: tensor<1004x512xf32>) -> tensor<256x1004xbf16> {
  // expected-error @below {{as a ZeRO-1 data-parallel (FP8 primary weights) layer over 8 devices of @dp, W [1004x512] is split along N (rows), whose size 1004 is not a multiple of 8: the shard collectives concatenate equal shards; pad N (rows) to a multiple of 8 (the ZeRO-1 flat shard would cut W's rows; per-tensor recipes stay exact with any cut in the runtime's sharded quantization, fp8mlir.distributed.quantize_flat_shard)}}
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<256x512xbf16>, tensor<1004x512xf32>) -> tensor<256x1004xbf16>
  return %y : tensor<256x1004xbf16>
}

// -----

// Blockwise: 1024 rows / 8 = 128-row shards keep the tiles, 512 / 8 = 64 not.
func.func @dp_cut_tiles(%x: tensor<256x512xbf16>, %w: tensor<512x512xf32>) -> tensor<256x512xbf16> {
  // expected-error @below {{W [512x512] is split along N (rows) into shards of 64, which cut its rowwise `tile 128x128` blocks (128 along N (rows)): a block on two devices needs its amax max-all-reduced before its scale}}
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>} : (tensor<256x512xbf16>, tensor<512x512xf32>) -> tensor<256x512xbf16>
  return %y : tensor<256x512xbf16>
}

// RUN: fp8-opt %s -split-input-file -fp8-shard-linear="mode=row" -verify-diagnostics
// RUN: not fp8-opt %s -fp8-shard-linear="mode=diagonal world-size=2" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not fp8-opt %s -fp8-shard-linear="mode=dp grid=tp world-size=4" 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: not fp8-opt %s -fp8-shard-linear="mode=dp grid=tp grid-axis=1" 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: not fp8-opt %s -fp8-shard-linear="mode=dp grid=none" 2>&1 | FileCheck %s --check-prefix=NOGRID

// MODE: fp8-shard-linear: unknown mode 'diagonal' (expected column, row or dp)
// SIZE: fp8-shard-linear: world-size 4 differs from the grid's axis 0 size 2
// AXIS: fp8-shard-linear: grid-axis 1 is out of range for a grid of rank 1
// NOGRID: fp8-shard-linear: the module has no shard.grid @none; give world-size (and grid-axis = 0) to create a 1-D grid

// Row-parallel blockwise on the existing grid: K/T = 192 cuts the 128-wide
// blocks along K, the GEMM's reduction dimension.
shard.grid @tp(shape = 2)
func.func @row_cut_k_blocks(%x: tensor<256x384xbf16>, %w: tensor<256x384xbf16>) -> tensor<256x256xbf16> {
  // expected-error @below {{as a row-parallel layer over 2 devices of @tp, X [256x384] is split along K (columns) into shards of 192, which cut its rowwise `tile 1x128` blocks (128 along K (columns)): the device's GEMMs would read blocks that start or end in another device's shard}}
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>} : (tensor<256x384xbf16>, tensor<256x384xbf16>) -> tensor<256x256xbf16>
  return %y : tensor<256x256xbf16>
}

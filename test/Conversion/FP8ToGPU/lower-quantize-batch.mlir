// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-quantize="strict=true" | FileCheck %s

// A batch of 4 expert weights [4, 256, 384] in 128x128 tiles: one kernel
// casts the [1024, 384] matrix (its tiles stay inside one expert) and
// writes each tile's transpose at its expert's offset: the operands are
// the batch's 3-D tensors, the grid the fixed [3, 8, 1] of the matrix's
// tiles.
// CHECK-LABEL: func.func private @fp8_quantize_blockwise_pow2_128x128_bf16_e4m3_r1024_c384_clamp0x38d1b717_row_col_g4_launch_into
// CHECK-SAME: (memref<4x256x384xbf16> {bufferization.access = "read"}, memref<4x256x384xf8E4M3FN> {bufferization.access = "write"}, memref<4x2x3xf32> {bufferization.access = "write"}, memref<4x384x256xf8E4M3FN> {bufferization.access = "write"}, memref<4x3x2xf32> {bufferization.access = "write"})
// CHECK-LABEL: func.func @experts
// CHECK: fp8.launch @fp8_quantize_blockwise_pow2_128x128_bf16_e4m3_r1024_c384_clamp0x38d1b717_row_col_g4_launch_into(%arg0,
// CHECK: gpu.func @fp8_quantize_blockwise_pow2_128x128_bf16_e4m3_r1024_c384_clamp0x38d1b717_row_col_g4
// CHECK-SAME: grid = {dims = [3, 8, 1], kind = "fixed"}
// CHECK-SAME: {alignment = 16 : i64, dtype = "bf16", name = "x", role = "input", shape = [4, 256, 384]}
// CHECK-SAME: {alignment = 8 : i64, dtype = "e4m3", name = "rowwise", role = "output", shape = [4, 256, 384]}
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "rowwise_scale_inv", role = "output", shape = [4, 2, 3]}
// CHECK-SAME: {alignment = 8 : i64, dtype = "e4m3", name = "columnwise", role = "output", shape = [4, 384, 256]}
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "columnwise_scale_inv", role = "output", shape = [4, 3, 2]}
// The tile's expert (row tile / 2) and its row tile in the expert.
// CHECK-DAG: arith.divui %{{.*}}, %c2_i32
// CHECK-DAG: arith.remui %{{.*}}, %c2_i32
func.func @experts(%w: tensor<4x256x384xbf16>)
    -> (tensor<4x256x384xf8E4M3FN>, tensor<4x2x3xf32>, tensor<4x384x256xf8E4M3FN>, tensor<4x3x2xf32>) {
  %q, %s, %qt, %st = fp8.quantize %w {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>}
      : tensor<4x256x384xbf16> -> rowwise(tensor<4x256x384xf8E4M3FN>, tensor<4x2x3xf32>) columnwise(tensor<4x384x256xf8E4M3FN>, tensor<4x3x2xf32>)
  return %q, %s, %qt, %st : tensor<4x256x384xf8E4M3FN>, tensor<4x2x3xf32>, tensor<4x384x256xf8E4M3FN>, tensor<4x3x2xf32>
}

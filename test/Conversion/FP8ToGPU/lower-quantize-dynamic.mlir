// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-quantize="strict=true" | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-lower-quantize="strict=true" | FileCheck %s --check-prefix=SM100
// RUN: fp8-opt %s -split-input-file -fp8-to-ptx=chip=sm_90a | FileCheck %s --check-prefix=PTX

// A run-time row count R: one kernel for every R, R its trailing i32
// parameter `r`, bound by the runtime from x's shape (symbol "R"); the
// scale extents are symbolic, the grid is the tiles of x, and every row is
// guarded by r.
// The outputs' run-time extents are R or, for the columnwise scales (of
// x^T, 1x128 blocks along R), ceil(R/128).
// CHECK-LABEL: func.func @blockwise_rows
// CHECK-NOT: fp8.quantize
// CHECK: %[[R0:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x512xbf16>
// CHECK: tensor.empty(%[[R0]]) : tensor<?x512xf8E4M3FN>
// CHECK: %[[R1:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x512xbf16>
// CHECK: tensor.empty(%[[R1]]) : tensor<?x4xf32>
// CHECK: tensor.empty(%{{.*}}) : tensor<?x512xf8E4M3FN>
// CHECK: %[[R3:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x512xbf16>
// CHECK: %[[T:.*]] = arith.ceildivui %[[R3]], %c128 : index
// CHECK: tensor.empty(%[[T]]) : tensor<512x?xf32>
// CHECK: fp8.launch @fp8_quantize_blockwise_pow2_1x128_bf16_e4m3_rdyn_c512_clamp0x38d1b717_row_col_untransposed_launch_into(%arg0, %{{.*}}) outputs [1, 2, 3, 4] : (tensor<?x512xbf16>, tensor<?x512xf8E4M3FN>, tensor<?x4xf32>, tensor<?x512xf8E4M3FN>, tensor<512x?xf32>) -> (tensor<?x512xf8E4M3FN>, tensor<?x4xf32>, tensor<?x512xf8E4M3FN>, tensor<512x?xf32>)
// CHECK: gpu.func @fp8_quantize_blockwise_pow2_1x128_bf16_e4m3_rdyn_c512_clamp0x38d1b717_row_col_untransposed(
// CHECK-SAME: %[[R:arg[0-9]+]]: i32) kernel
// CHECK-SAME: grid = {kind = "tiles", operand = "x", tile_m = 128 : i64, tile_n = 128 : i64}
// CHECK-SAME: {alignment = 16 : i64, dtype = "bf16", name = "x", role = "input", shape = ["R", 512]}
// CHECK-SAME: {alignment = 8 : i64, dtype = "e4m3", name = "rowwise", role = "output", shape = ["R", 512]}
// 1x128 blocks of x: MN-major, padded to a multiple of 4 rows.
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "rowwise_scale_inv", role = "output", shape = [4, "roundup(R, 4)"]}
// CHECK-SAME: {alignment = 8 : i64, dtype = "e4m3", name = "columnwise", role = "output", shape = ["R", 512]}
// 128x1 blocks of x (1x128 of x^T): one row of scales per 128 rows.
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "columnwise_scale_inv", role = "output", shape = ["ceildiv(R, 128)", 512]}
// CHECK-SAME: {kind = "i32", name = "r", value = "R"}
// CHECK-SAME: quantize = {{{.*}}rows = "R"
// The loads are guarded by r (a partial last row tile)...
// CHECK: arith.cmpi ult, %{{.*}}, %[[R]] : i32
// CHECK: scf.if
// CHECK: llvm.load
// ... and the MN-major scale stride is roundup(r, 4).
// CHECK: %[[R3:[0-9]+]] = arith.addi %[[R]], %c3_i32{{.*}}
// CHECK: arith.andi %[[R3]], %c-4_i32{{.*}}
// CHECK: gpu.return
// PTX-LABEL: func.func @blockwise_rows
// PTX-NOT: fp8.quantize
// PTX: gpu.binary @fp8_kernels
// PTX-SAME: .entry fp8_quantize_blockwise_pow2_1x128_bf16_e4m3_rdyn_c512_clamp0x38d1b717_row_col_untransposed(
// PTX-SAME: .param .u32 fp8_quantize_blockwise_pow2_1x128_bf16_e4m3_rdyn_c512_clamp0x38d1b717_row_col_untransposed_param_5
func.func @blockwise_rows(%x: tensor<?x512xbf16>) -> (tensor<?x512xf8E4M3FN>, tensor<?x4xf32>, tensor<?x512xf8E4M3FN>, tensor<512x?xf32>) {
  %q, %s, %qt, %st = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>, columnwise_layout = #fp8.columnwise_layout<untransposed>}
      : tensor<?x512xbf16> -> rowwise(tensor<?x512xf8E4M3FN>, tensor<?x4xf32>) columnwise(tensor<?x512xf8E4M3FN>, tensor<512x?xf32>)
  return %q, %s, %qt, %st : tensor<?x512xf8E4M3FN>, tensor<?x4xf32>, tensor<?x512xf8E4M3FN>, tensor<512x?xf32>
}

// -----

// MXFP8 atoms and 128x128 tiles: ceil(R / 128) of them along R.
// CHECK-LABEL: func.func @mx_rows
// CHECK: gpu.func @fp8_quantize_mxfp8_1x32_bf16_e4m3_rdyn_c512_row_col_untransposed(
// CHECK-SAME: name = "rowwise_scale_inv", role = "output", shape = ["ceildiv(R, 128)", 4, 512]
// CHECK-SAME: name = "columnwise_scale_inv", role = "output", shape = [4, "ceildiv(R, 128)", 512]
// SM100-LABEL: func.func @mx_rows
// SM100: gpu.func @fp8_quantize_mxfp8_1x32_bf16_e4m3_rdyn_c512_row_col_untransposed(
// SM100: i16(f8E8M0FNU)
func.func @mx_rows(%x: tensor<?x512xbf16>) -> (tensor<?x512xf8E4M3FN>, tensor<?x16xf8E8M0FNU>, tensor<?x512xf8E4M3FN>, tensor<512x?xf8E8M0FNU>) {
  %q, %s, %qt, %st = fp8.quantize %x {recipe = #fp8.mxfp8<>, granularity = #fp8.granularity<mx 1x32>, columnwise_layout = #fp8.columnwise_layout<untransposed>}
      : tensor<?x512xbf16> -> rowwise(tensor<?x512xf8E4M3FN>, tensor<?x16xf8E8M0FNU>) columnwise(tensor<?x512xf8E4M3FN>, tensor<512x?xf8E8M0FNU>)
  return %q, %s, %qt, %st : tensor<?x512xf8E4M3FN>, tensor<?x16xf8E8M0FNU>, tensor<?x512xf8E4M3FN>, tensor<512x?xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func @tile128_rows
// CHECK: gpu.func @fp8_quantize_blockwise_pow2_128x128_bf16_e4m3_rdyn_c512_clamp0x38d1b717_row(
// CHECK-SAME: name = "rowwise_scale_inv", role = "output", shape = ["ceildiv(R, 128)", 4]
func.func @tile128_rows(%x: tensor<?x512xbf16>) -> (tensor<?x512xf8E4M3FN>, tensor<?x4xf32>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>}
      : tensor<?x512xbf16> -> rowwise(tensor<?x512xf8E4M3FN>, tensor<?x4xf32>)
  return %q, %s : tensor<?x512xf8E4M3FN>, tensor<?x4xf32>
}

// -----

// Delayed scaling with the amax recorded into the history, and the amax
// kernel of current scaling: R a parameter too.
// CHECK-LABEL: func.func @delayed_rows
// CHECK: fp8.launch @fp8_quantize_tensor_tensor_bf16_e4m3_rdyn_c4096_row_hist16_launch_into
// CHECK: gpu.func @fp8_quantize_tensor_tensor_bf16_e4m3_rdyn_c4096_row_hist16(
// CHECK-SAME: i32) kernel
// CHECK-SAME: name = "amax_history", role = "output", shape = [16]
// CHECK-SAME: {kind = "i32", name = "r", value = "R"}
func.func @delayed_rows(%x: tensor<?x4096xbf16>, %s: tensor<f32>, %h: tensor<16xf32>) -> (tensor<?x4096xf8E4M3FN>, tensor<f32>, tensor<16xf32>) {
  %q, %si, %a = fp8.quantize %x scale %s {recipe = #fp8.delayed<history = 16>, granularity = #fp8.granularity<tensor>}
      : tensor<?x4096xbf16>, tensor<f32> -> rowwise(tensor<?x4096xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
  %h1 = fp8.update_amax_history %h, %a {recipe = #fp8.delayed<history = 16>} : tensor<16xf32>, tensor<f32>
  return %q, %si, %h1 : tensor<?x4096xf8E4M3FN>, tensor<f32>, tensor<16xf32>
}

// -----

// CHECK-LABEL: func.func @amax_rows
// CHECK: gpu.func @fp8_amax_bf16_rdyn_c7168(
// CHECK-SAME: i32) kernel
// CHECK-SAME: kind = "amax"
// CHECK-SAME: {kind = "i32", name = "r", value = "R"}
func.func @amax_rows(%x: tensor<?x7168xbf16>) -> tensor<f32> {
  %a = fp8.amax %x : tensor<?x7168xbf16> -> tensor<f32>
  return %a : tensor<f32>
}

// -----

// Power-of-two blockwise scales in the MX form (scale_granularity, set by
// fp8-blockwise-to-mx on sm_100a): UE8M0 codes in the 128x4 atoms of the MX
// kernels, a tile's code (its scale_inv's exponent field) stored as one
// 32-bit word over the four 1x32 blocks of its 128 columns.
// CHECK-LABEL: func.func @blockwise_mx_scales
// CHECK: gpu.func @fp8_quantize_blockwise_pow2_1x128_bf16_e4m3_rdyn_c256_clamp0x38d1b717_row_col_untransposed_mxscales(
// CHECK-SAME: {alignment = 4 : i64, dtype = "ue8m0", name = "rowwise_scale_inv", role = "output", shape = ["ceildiv(R, 128)", 2, 512]}
// CHECK-SAME: {alignment = 4 : i64, dtype = "ue8m0", name = "columnwise_scale_inv", role = "output", shape = [2, "ceildiv(R, 128)", 512]}
// CHECK-SAME: rowwise_scale_layout = "mx_atom_128x4_ue8m0", rule = "blockwise_pow2", scale_granularity = "mx1x32"
// CHECK: %[[CODE:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK: %[[WIDE:.*]] = arith.extui %[[CODE]] : i8 to i32
// CHECK: %[[WORD:.*]] = arith.muli %[[WIDE]], %c16843009_i32
// CHECK: llvm.store %[[WORD]], %{{.*}} : i32, !llvm.ptr
// SM100-LABEL: func.func @blockwise_mx_scales
// SM100: gpu.func @fp8_quantize_blockwise_pow2_1x128_bf16_e4m3_rdyn_c256_clamp0x38d1b717_row_col_untransposed_mxscales(
// SM100-SAME: chip = "sm_100a"
func.func @blockwise_mx_scales(%x: tensor<?x256xbf16>) -> (tensor<?x256xf8E4M3FN>, tensor<?x8xf8E8M0FNU>, tensor<?x256xf8E4M3FN>, tensor<256x?xf8E8M0FNU>) {
  %q, %s, %qc, %sc = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>, columnwise_layout = #fp8.columnwise_layout<untransposed>, scale_granularity = #fp8.granularity<mx 1x32>} : tensor<?x256xbf16> -> rowwise(tensor<?x256xf8E4M3FN>, tensor<?x8xf8E8M0FNU>) columnwise(tensor<?x256xf8E4M3FN>, tensor<256x?xf8E8M0FNU>)
  return %q, %s, %qc, %sc : tensor<?x256xf8E4M3FN>, tensor<?x8xf8E8M0FNU>, tensor<?x256xf8E4M3FN>, tensor<256x?xf8E8M0FNU>
}

// -----

// 128x128 tiles: each tile fills a whole atom of x and one of x^T, a word
// per thread of the first 128.
// CHECK-LABEL: func.func @blockwise_128x128_mx_scales
// CHECK: gpu.func @fp8_quantize_blockwise_pow2_128x128_bf16_e4m3_r256_c256_clamp0x38d1b717_row_mxscales(
// CHECK-SAME: {alignment = 4 : i64, dtype = "ue8m0", name = "rowwise_scale_inv", role = "output", shape = [2, 2, 512]}
// CHECK: arith.muli %{{.*}}, %c16843009_i32
// CHECK: arith.cmpi ult, %{{.*}}, %c128_i32
func.func @blockwise_128x128_mx_scales(%x: tensor<256x256xbf16>) -> (tensor<256x256xf8E4M3FN>, tensor<256x8xf8E8M0FNU>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>, scale_granularity = #fp8.granularity<mx 1x32>} : tensor<256x256xbf16> -> rowwise(tensor<256x256xf8E4M3FN>, tensor<256x8xf8E8M0FNU>)
  return %q, %s : tensor<256x256xf8E4M3FN>, tensor<256x8xf8E8M0FNU>
}

// -----

// A transposed columnwise output with a run-time R: [C, R], rows of R bytes
// whose stores take the row length from r; r must be a multiple of 16,
// which the runtime checks at launch ("multiple_of").
// CHECK-LABEL: func.func @transposed_rows
// CHECK: gpu.func @fp8_quantize_blockwise_pow2_1x128_bf16_e4m3_rdyn_c512_clamp0x38d1b717_row_col(
// CHECK-SAME: %[[R:arg[0-9]+]]: i32) kernel
// CHECK-SAME: {alignment = 8 : i64, dtype = "e4m3", name = "columnwise", role = "output", shape = [512, "R"]}
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "columnwise_scale_inv", role = "output", shape = ["ceildiv(R, 128)", 512]}
// CHECK-SAME: {kind = "i32", multiple_of = 16 : i64, name = "r", reason = "the transposed columnwise output's rows are R bytes, 16-byte aligned", value = "R"}
// CHECK: arith.extui %[[R]] : i32 to i64
func.func @transposed_rows(%x: tensor<?x512xbf16>) -> (tensor<?x512xf8E4M3FN>, tensor<?x4xf32>, tensor<512x?xf8E4M3FN>, tensor<512x?xf32>) {
  %q, %s, %qt, %st = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>}
      : tensor<?x512xbf16> -> rowwise(tensor<?x512xf8E4M3FN>, tensor<?x4xf32>) columnwise(tensor<512x?xf8E4M3FN>, tensor<512x?xf32>)
  return %q, %s, %qt, %st : tensor<?x512xf8E4M3FN>, tensor<?x4xf32>, tensor<512x?xf8E4M3FN>, tensor<512x?xf32>
}

// -----

// fp8.dequantize of a tensor<?xC>: R the trailing i32, bound from x; the
// 1x128 scale stride is roundup(r, 4).
// CHECK-LABEL: func.func @dequantize_rows
// CHECK: %[[D:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x256xf8E4M3FN>
// CHECK: %[[Y:.*]] = tensor.empty(%[[D]]) : tensor<?x256xbf16>
// CHECK: fp8.launch @fp8_dequantize_1x128_e4m3_bf16_rdyn_c256_launch_into(%arg0, %arg1, %[[Y]]) outputs [2]
// CHECK: gpu.func @fp8_dequantize_1x128_e4m3_bf16_rdyn_c256(
// CHECK-SAME: %[[R:arg[0-9]+]]: i32) kernel
// CHECK-SAME: {alignment = 8 : i64, dtype = "e4m3", name = "x", role = "input", shape = ["R", 256]}
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "scale_inv", role = "input", shape = [2, "roundup(R, 4)"]}
// CHECK-SAME: {alignment = 16 : i64, dtype = "bf16", name = "y", role = "output", shape = ["R", 256]}
// CHECK-SAME: {kind = "i32", name = "r", value = "R"}
// CHECK: %[[R3:[0-9]+]] = arith.addi %[[R]], %c3_i32{{.*}}
// CHECK: arith.andi %[[R3]], %c-4_i32{{.*}}
func.func @dequantize_rows(%q: tensor<?x256xf8E4M3FN>, %s: tensor<?x2xf32>) -> tensor<?x256xbf16> {
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 1x128>}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32> -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}

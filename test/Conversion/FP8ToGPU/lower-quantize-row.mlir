// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-quantize="strict=true" | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-lower-quantize="strict=true" | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-to-ptx=chip=sm_90a | FileCheck %s --check-prefix=PTX
// The example's two row-granularity casts (run-time and static R) become
// kernels: nothing is left for the host.
// RUN: fp8-opt %fp8_src_root/examples/rowwise_scaling.mlir -fp8-to-ptx=chip=sm_90a | FileCheck %s --check-prefix=EXAMPLE
// EXAMPLE-NOT: fp8.quantize
// EXAMPLE-DAG: func.func private @fp8_quantize_current_row_bf16_e4m3_r2048_c7168_row_launch_into
// EXAMPLE-DAG: func.func private @fp8_quantize_current_row_bf16_e4m3_rdyn_c7168_row_launch_into
// EXAMPLE-NOT: fp8.quantize

// Row granularity (current scaling, one scale per row): one kernel. A row
// is shared by a power of two of threads (here 8: 42 chunks of 8 elements,
// at most 8 16-byte loads a thread), so a CTA casts 256 / 8 = 32 rows, a
// band; the grid holds 8 bands along x (tile_n = C / 8) and the rest along
// y. The row stays in registers from its amax to its cast: x is read once.
// Loads past x (the last band's rows, the row's last chunks) are clamped
// into it, and only stores are guarded.
// CHECK-LABEL: func.func @row_static
// CHECK-NOT: fp8.quantize
// CHECK: fp8.launch @fp8_quantize_current_row_bf16_e4m3_r208_c336_eps0x3f800000_pow2_row_launch_into(%arg0, %{{.*}}, %{{.*}}) outputs [1, 2] : (tensor<208x336xbf16>, tensor<208x336xf8E4M3FN>, tensor<208x1xf32>) -> (tensor<208x336xf8E4M3FN>, tensor<208x1xf32>)
// CHECK: gpu.func @fp8_quantize_current_row_bf16_e4m3_r208_c336_eps0x3f800000_pow2_row(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>) kernel
// CHECK-SAME: grid = {kind = "tiles", operand = "x", tile_m = 256 : i64, tile_n = 42 : i64}, kind = "quantize"
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "rowwise_scale_inv", role = "output", shape = [208, 1]}
// CHECK-SAME: quantize = {cols = 336 : i64, dtype = "e4m3", epsilon = 1.000000e+00 : f32, granularity = "row", input_dtype = "bf16", pow2 = true, rows = 208 : i64, rowwise_scale_layout = "row_major", rule = "current"}
// CHECK-SAME: nvvm.minctasm = {{[23]}} : i32
// CHECK-NOT: scf.for
// CHECK: arith.minui %{{.*}}, %c41_i32
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// The maximum of |x|'s bits, in bf16.
// CHECK: arith.maxui %{{.*}} : vector<8xi16>
// CHECK-COUNT-3: gpu.shuffle  xor
// The row's scale: pow2 keeps the exponent bits of 448 / amax.
// CHECK: arith.divf
// CHECK: arith.andi %{{.*}}, %c-8388608_i32
// CHECK: scf.if
// CHECK: llvm.store
// CHECK: nvvm.convert.f32x2.to.f8x2
// CHECK-NOT: llvm.load
// CHECK: gpu.return
func.func @row_static(%x: tensor<208x336xbf16>) -> (tensor<208x336xf8E4M3FN>, tensor<208x1xf32>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.current<epsilon = 1.0, pow2 = true>, granularity = #fp8.granularity<row>} : tensor<208x336xbf16> -> rowwise(tensor<208x336xf8E4M3FN>, tensor<208x1xf32>)
  return %q, %s : tensor<208x336xf8E4M3FN>, tensor<208x1xf32>
}

// -----

// A run-time R: the trailing i32 `r`, scale_inv ["R", 1]. f32 inputs: a
// chunk of 8 is two loads, 16 threads a row, 16 rows a band.
// CHECK-LABEL: func.func @row_dynamic
// CHECK: fp8.launch @fp8_quantize_current_row_f32_e5m2_rdyn_c512_row_launch_into(%arg0, %{{.*}}, %{{.*}}) outputs [1, 2] : (tensor<?x512xf32>, tensor<?x512xf8E5M2>, tensor<?x1xf32>) -> (tensor<?x512xf8E5M2>, tensor<?x1xf32>)
// CHECK: gpu.func @fp8_quantize_current_row_f32_e5m2_rdyn_c512_row(
// CHECK-SAME: %[[R:arg[0-9]+]]: i32) kernel
// CHECK-SAME: tile_m = 128 : i64, tile_n = 64 : i64
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "rowwise_scale_inv", role = "output", shape = ["R", 1]}
// CHECK-SAME: {kind = "i32", name = "r", value = "R"}
// CHECK-SAME: rows = "R"
// CHECK: arith.cmpi ult, %{{.*}}, %[[R]] : i32
// PTX-LABEL: func.func @row_dynamic
// PTX-NOT: fp8.quantize
// PTX: .entry fp8_quantize_current_row_f32_e5m2_rdyn_c512_row(
func.func @row_dynamic(%x: tensor<?x512xf32>) -> (tensor<?x512xf8E5M2>, tensor<?x1xf32>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<row>} : tensor<?x512xf32> -> rowwise(tensor<?x512xf8E5M2>, tensor<?x1xf32>)
  return %q, %s : tensor<?x512xf8E5M2>, tensor<?x1xf32>
}

// -----

// Rows wider than 2048 16-byte loads take several slabs, each read twice
// (the amax loop, then the cast loop); 256 threads a row, whose warps trade
// their maxima through shared memory.
// CHECK-LABEL: func.func @row_wide
// CHECK: gpu.func @fp8_quantize_current_row_bf16_e4m3_r4_c32768_row(
// CHECK-SAME: tile_m = 8 : i64, tile_n = 4096 : i64
// CHECK: scf.for %{{.*}} = %{{.*}} to %c2_i32{{.*}} step %{{.*}} iter_args(
// CHECK: arith.maxui %{{.*}} : vector<8xi16>
// CHECK: scf.yield
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: gpu.barrier
// CHECK: arith.divf
// CHECK: scf.for %{{.*}} = %{{.*}} to %c2_i32{{.*}} step
// CHECK: llvm.load
// CHECK: nvvm.convert.f32x2.to.f8x2
func.func @row_wide(%x: tensor<4x32768xbf16>) -> (tensor<4x32768xf8E4M3FN>, tensor<4x1xf32>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<row>} : tensor<4x32768xbf16> -> rowwise(tensor<4x32768xf8E4M3FN>, tensor<4x1xf32>)
  return %q, %s : tensor<4x32768xf8E4M3FN>, tensor<4x1xf32>
}

// -----

// Row granularity with a columnwise output (one scale per column of x, the
// rows of x^T): one CTA per 128-column band (a fixed grid, any R) takes its
// columns' maxima over every row tile (the 8 warps' through shared memory),
// stores scale_inv [C, 1], then casts every row tile, transposed here.
// CHECK-LABEL: func.func @columns
// CHECK: gpu.func @fp8_quantize_current_row_bf16_e4m3_rdyn_c336_col(
// CHECK-SAME: %[[R:arg[0-9]+]]: i32) kernel
// CHECK-SAME: dynamic_shared_memory_bytes = 70176
// CHECK-SAME: grid = {dims = [3, 1, 1], kind = "fixed"}
// CHECK-SAME: {alignment = 8 : i64, dtype = "e4m3", name = "columnwise", role = "output", shape = [336, "R"]}
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "columnwise_scale_inv", role = "output", shape = [336, 1]}
// CHECK-SAME: multiple_of = 16
// CHECK: scf.for
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: gpu.barrier
func.func @columns(%x: tensor<?x336xbf16>) -> (tensor<336x?xf8E4M3FN>, tensor<336x1xf32>) {
  %qt, %st = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<row>}
      : tensor<?x336xbf16> -> columnwise(tensor<336x?xf8E4M3FN>, tensor<336x1xf32>)
  return %qt, %st : tensor<336x?xf8E4M3FN>, tensor<336x1xf32>
}

// -----

// Untransposed: the column multipliers from shared memory, no transpose
// tile.
// CHECK-LABEL: func.func @columns_untransposed
// CHECK: gpu.func @fp8_quantize_current_row_f32_e4m3_r208_c256_col_untransposed(
// CHECK-SAME: dynamic_shared_memory_bytes = 4640
// CHECK-SAME: grid = {dims = [2, 1, 1], kind = "fixed"}
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "columnwise_scale_inv", role = "output", shape = [256, 1]}
func.func @columns_untransposed(%x: tensor<208x256xf32>) -> (tensor<208x256xf8E4M3FN>, tensor<256x1xf32>) {
  %qt, %st = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<row>, columnwise_layout = #fp8.columnwise_layout<untransposed>}
      : tensor<208x256xf32> -> columnwise(tensor<208x256xf8E4M3FN>, tensor<256x1xf32>)
  return %qt, %st : tensor<208x256xf8E4M3FN>, tensor<256x1xf32>
}

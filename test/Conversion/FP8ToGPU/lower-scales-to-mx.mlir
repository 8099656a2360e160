// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-lower-quantize=strict=true | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-to-ptx=chip=sm_100a | FileCheck %s --check-prefix=PTX

// Power-of-two blockwise scales that no quantization of the function wrote
// (here arguments) become the MX scales of the block-scaled GEMM with a
// kernel: one CTA of 128 threads per 128 rows, thread t writing row t's
// 32-bit word of each atom along K. f32 1x128 scales are read MN-major,
// [ceil(C/128), roundup(R, 4)], as the quantization kernels write them.
// CHECK-LABEL: func.func private @fp8_scales_to_mx_f32_1x128_r200_b224_launch_into
// CHECK-SAME: (memref<200x56xf32> {bufferization.access = "read"}, memref<200x224xf8E8M0FNU> {bufferization.access = "write"})
// CHECK-LABEL: func.func @act
// CHECK: %[[E:.*]] = tensor.empty() : tensor<200x224xf8E8M0FNU>
// CHECK: fp8.launch @fp8_scales_to_mx_f32_1x128_r200_b224_launch_into(%arg0, %[[E]]) outputs [1]
// CHECK: gpu.func @fp8_scales_to_mx_f32_1x128_r200_b224(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>) kernel
// CHECK-SAME: grid = {kind = "tiles", operand = "scale_inv", tile_m = 56 : i64, tile_n = 128 : i64}
// CHECK-SAME: kind = "scales_to_mx"
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "scale_inv", role = "input", shape = [56, 200]}
// CHECK-SAME: {alignment = 4 : i64, dtype = "ue8m0", name = "mx_scale_inv", role = "output", shape = [2, 56, 512]}
// CHECK-SAME: scales_to_mx = {code = "the f32 exponent field (bits 23..30) of each power-of-two scale_inv", input_dtype = "f32", input_layout = "mn_major_tma_aligned", mx_blocks = 224 : i64, padding_rows = "0", rows = 200 : i64, scale_layout = "mx_atom_128x4_ue8m0", tile = [1, 128]}
// CHECK-SAME: nvvm.maxntid = array<i32: 128, 1, 1>
// The bands of 128 rows run along x; rows past R store 0 (as the atoms'
// padding).
// CHECK: gpu.block_id  x
// CHECK: arith.cmpi ult, %{{.*}}, %c200_i32 : i32
// CHECK: scf.for
// The code: bits 23..30 of the f32, the grid read with R's padded stride.
// CHECK: arith.muli %{{.*}}, %{{.*}} : i64
// CHECK: %[[BITS:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: %[[SH:.*]] = arith.shrui %[[BITS]], %c23_i32
// CHECK: arith.andi %[[SH]], %c255_i32
// Four codes packed into one word of the atom.
// CHECK-COUNT-3: arith.shli
// CHECK: llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr<1>
// PTX-LABEL: func.func @act
// PTX: call @fp8_scales_to_mx_f32_1x128_r200_b224_launch_into(%arg0, %{{.*}}) : (memref<200x56xf32>, memref<200x224xf8E8M0FNU>) -> ()
// PTX: gpu.binary @fp8_kernels
// PTX-SAME: .entry fp8_scales_to_mx_f32_1x128_r200_b224(
func.func @act(%a: tensor<200x56xf32>) -> tensor<200x224xf8E8M0FNU> {
  %0 = fp8.scales_to_mx %a {granularity = #fp8.granularity<tile 1x128>} : tensor<200x56xf32> -> tensor<200x224xf8E8M0FNU>
  return %0 : tensor<200x224xf8E8M0FNU>
}

// -----

// UE8M0 1x128 scales (row-major) with a run-time R: the trailing i32 `r`,
// bound from the scales' rows; the atoms' first extent ceil(R/128).
// CHECK-LABEL: func.func @act_rows
// CHECK: %[[R:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x56xf8E8M0FNU>
// CHECK: %[[E:.*]] = tensor.empty(%[[R]]) : tensor<?x224xf8E8M0FNU>
// CHECK: fp8.launch @fp8_scales_to_mx_ue8m0_1x128_rdyn_b224_launch_into(%arg0, %[[E]]) outputs [1]
// CHECK: gpu.func @fp8_scales_to_mx_ue8m0_1x128_rdyn_b224(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[RP:.*]]: i32) kernel
// CHECK-SAME: grid = {kind = "tiles", operand = "scale_inv", tile_m = 128 : i64, tile_n = 56 : i64}
// CHECK-SAME: {alignment = 1 : i64, dtype = "ue8m0", name = "scale_inv", role = "input", shape = ["R", 56]}
// CHECK-SAME: {alignment = 4 : i64, dtype = "ue8m0", name = "mx_scale_inv", role = "output", shape = ["ceildiv(R, 128)", 56, 512]}
// CHECK-SAME: {kind = "i32", name = "r", value = "R"}
// CHECK: gpu.block_id  y
// CHECK: arith.cmpi ult, %{{.*}}, %[[RP]] : i32
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i8
// CHECK: arith.extui %{{.*}} : i8 to i32
func.func @act_rows(%a: tensor<?x56xf8E8M0FNU>) -> tensor<?x224xf8E8M0FNU> {
  %0 = fp8.scales_to_mx %a {granularity = #fp8.granularity<tile 1x128>} : tensor<?x56xf8E8M0FNU> -> tensor<?x224xf8E8M0FNU>
  return %0 : tensor<?x224xf8E8M0FNU>
}

// -----

// f32 1x128 scales with a run-time R: the MN-major grid's shape holds
// RP = roundup(R, 4) (R itself cannot be bound from it), which the kernel
// takes as its row count (`rp`, checked to be a multiple of 4): the
// padding rows are converted too (no GEMM reads them).
// CHECK-LABEL: func.func @act_rows_f32
// CHECK: fp8.launch @fp8_scales_to_mx_f32_1x128_rdyn_b224_launch_into
// CHECK: gpu.func @fp8_scales_to_mx_f32_1x128_rdyn_b224(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32) kernel
// CHECK-SAME: grid = {kind = "tiles", operand = "scale_inv", tile_m = 56 : i64, tile_n = 128 : i64}
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "scale_inv", role = "input", shape = [56, "RP"]}
// CHECK-SAME: {alignment = 4 : i64, dtype = "ue8m0", name = "mx_scale_inv", role = "output", shape = ["ceildiv(RP, 128)", 56, 512]}
// CHECK-SAME: {kind = "i32", multiple_of = 4 : i64, name = "rp", reason = "the MN-major 1x128 scales pad R to a multiple of 4", value = "RP"}
func.func @act_rows_f32(%a: tensor<?x56xf32>) -> tensor<?x224xf8E8M0FNU> {
  %0 = fp8.scales_to_mx %a {granularity = #fp8.granularity<tile 1x128>} : tensor<?x56xf32> -> tensor<?x224xf8E8M0FNU>
  return %0 : tensor<?x224xf8E8M0FNU>
}

// -----

// 128x128 tiles of a 2112-row weight: 17 tile rows, one CTA each (a tile
// row's code in all 128 rows of its atoms), row-major; UE8M0 scales are
// copied byte for byte.
// CHECK-LABEL: func.func @weight
// CHECK: fp8.launch @fp8_scales_to_mx_f32_128x128_r2112_b224_launch_into
// CHECK-LABEL: func.func @ue8m0
// CHECK: fp8.launch @fp8_scales_to_mx_ue8m0_1x64_r8_b5_launch_into
// CHECK: gpu.func @fp8_scales_to_mx_f32_128x128_r2112_b224(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>) kernel
// CHECK-SAME: grid = {kind = "tiles", operand = "scale_inv", tile_m = 1 : i64, tile_n = 56 : i64}
// CHECK-SAME: {alignment = 4 : i64, dtype = "ue8m0", name = "mx_scale_inv", role = "output", shape = [17, 56, 512]}
// CHECK: gpu.func @fp8_scales_to_mx_ue8m0_1x64_r8_b5
// CHECK-SAME: {alignment = 1 : i64, dtype = "ue8m0", name = "scale_inv", role = "input", shape = [8, 3]}
// CHECK-SAME: {alignment = 4 : i64, dtype = "ue8m0", name = "mx_scale_inv", role = "output", shape = [1, 2, 512]}
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i8
// CHECK: arith.extui %{{.*}} : i8 to i32
func.func @weight(%w: tensor<17x56xf32>) -> tensor<2112x224xf8E8M0FNU> {
  %1 = fp8.scales_to_mx %w {granularity = #fp8.granularity<tile 128x128>} : tensor<17x56xf32> -> tensor<2112x224xf8E8M0FNU>
  return %1 : tensor<2112x224xf8E8M0FNU>
}
func.func @ue8m0(%e: tensor<8x3xf8E8M0FNU>) -> tensor<8x5xf8E8M0FNU> {
  %2 = fp8.scales_to_mx %e {granularity = #fp8.granularity<tile 1x64>} : tensor<8x3xf8E8M0FNU> -> tensor<8x5xf8E8M0FNU>
  return %2 : tensor<8x5xf8E8M0FNU>
}

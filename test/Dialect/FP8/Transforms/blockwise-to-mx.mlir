// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-blockwise-to-mx | FileCheck %s
// A chip without a block-scaled MMA keeps the blockwise GEMMs as they are.
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-blockwise-to-mx | FileCheck %s --check-prefix=SM90
// SM90-NOT: mx 1x32
// SM90-NOT: f8E8M0FNU>, tensor<?x
// Which chip is decided by the module's fp8.target: none is an error.
// RUN: not fp8-opt %s -split-input-file -fp8-blockwise-to-mx 2>&1 | FileCheck %s --check-prefix=NO-TARGET
// NO-TARGET: error: no fp8.target on the module: run fp8-attach-target{chip=...} (fp8-to-ptx does) first

// DeepSeek 1x128 x 128x128 with power-of-two f32 scales becomes an MXFP8
// GEMM on the same FP8 data: A's scale (m, kb) repeats over the four 1x32
// blocks of its 128-K group, B's over its 128 rows too (fp8.scales_to_mx,
// the UE8M0 code the f32 exponent field).
// CHECK-LABEL: func.func @deepseek
// CHECK-SAME: (%[[XA:.*]]: tensor<?x7168xf8E4M3FN>, %[[XB:.*]]: tensor<2112x7168xf8E4M3FN>, %[[SA:.*]]: tensor<?x56xf32>, %[[SB:.*]]: tensor<17x56xf32>)
// CHECK:     %[[MA:.*]] = fp8.scales_to_mx %[[SA]] {granularity = #fp8.granularity<tile 1x128>} : tensor<?x56xf32> -> tensor<?x224xf8E8M0FNU>
// CHECK:     %[[MB:.*]] = fp8.scales_to_mx %[[SB]] {granularity = #fp8.granularity<tile 128x128>} : tensor<17x56xf32> -> tensor<2112x224xf8E8M0FNU>
// CHECK:     fp8.scaled_matmul %[[XA]], %[[XB]], %[[MA]], %[[MB]] {a_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<mx 1x32>}
func.func @deepseek(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<17x56xf32>) -> tensor<?x2112xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<17x56xf32>) -> tensor<?x2112xbf16>
  return %0 : tensor<?x2112xbf16>
}

// -----

// UE8M0 scales are repeated the same way; a K tail (K = 160: two 128-K
// groups, five 1x32 blocks) maps block 4 to group 1; MN-major operands take
// their M/N extent from dimension 1.
// CHECK-LABEL: func.func @e8m0_tail_mn
// CHECK:     fp8.scales_to_mx %{{.*}} : tensor<64x2xf8E8M0FNU> -> tensor<64x5xf8E8M0FNU>
// CHECK:     fp8.scales_to_mx %{{.*}} : tensor<32x2xf8E8M0FNU> -> tensor<32x5xf8E8M0FNU>
// CHECK:     fp8.scaled_matmul {{.*}} {a_granularity = #fp8.granularity<mx 1x32>, a_major = #fp8.major<mn>, accumulation = #fp8.accumulation<promoted(32)>, b_granularity = #fp8.granularity<mx 1x32>, b_major = #fp8.major<mn>}
func.func @e8m0_tail_mn(%a: tensor<160x64xf8E4M3FN>, %b: tensor<160x32xf8E4M3FN>, %sa: tensor<64x2xf8E8M0FNU>, %sb: tensor<32x2xf8E8M0FNU>) -> tensor<64x32xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, a_major = #fp8.major<mn>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<promoted(32)>} : (tensor<160x64xf8E4M3FN>, tensor<160x32xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<32x2xf8E8M0FNU>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

// Not rewritten: f32 scales that may not be powers of two (scales = f32, or
// no recipe to say), and per-tensor scales.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: fp8.scales_to_mx
// CHECK-COUNT-3: granularity = #fp8.granularity<{{tile|tensor}}
// CHECK-NOT: mx 1x32
func.func @left_alone(%a: tensor<?x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>, %sa: tensor<?x2xf32>, %sb: tensor<1x2xf32>, %t: tensor<f32>) -> (tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>) {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<scales = f32>} : (tensor<?x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<?x128xbf16>
  %1 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<?x128xbf16>
  %2 = fp8.scaled_matmul %a, %b, %t, %t {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x128xbf16>
  return %0, %1, %2 : tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>
}

// -----

// Scales from a quantization of the same function: the quantization writes
// them in the MX form (scale_granularity), no conversion is left. The
// weight's transposed 128x128 scales (an MN-major B read from its rowwise
// data) become an untransposed columnwise output: the same bytes, whose
// scales are those of W^T.
// CHECK-LABEL: func.func @folded
// CHECK-NOT: linalg.
// CHECK:     %[[XQ:.*]], %[[XS:.*]] = fp8.quantize %{{.*}} {granularity = #fp8.granularity<tile 1x128>, recipe = #fp8.blockwise<>, scale_granularity = #fp8.granularity<mx 1x32>} : tensor<?x256xbf16> -> rowwise(tensor<?x256xf8E4M3FN>, tensor<?x8xf8E8M0FNU>)
// CHECK:     %[[WQ:.*]], %[[WS:.*]], %[[WQT:.*]], %[[WST:.*]] = fp8.quantize %{{.*}} {columnwise_layout = #fp8.columnwise_layout<untransposed>, granularity = #fp8.granularity<tile 128x128>, recipe = #fp8.blockwise<>, scale_granularity = #fp8.granularity<mx 1x32>} : tensor<384x256xbf16> -> rowwise(tensor<384x256xf8E4M3FN>, tensor<384x8xf8E8M0FNU>) columnwise(tensor<384x256xf8E4M3FN>, tensor<256x12xf8E8M0FNU>)
// CHECK-NOT: linalg.
// CHECK:     fp8.scaled_matmul %[[XQ]], %[[WQ]], %[[XS]], %[[WS]] {a_granularity = #fp8.granularity<mx 1x32>
// CHECK:     %[[DQ:.*]], %[[DS:.*]] = fp8.quantize %{{.*}} scale_granularity = #fp8.granularity<mx 1x32>} : tensor<?x384xbf16> -> rowwise(tensor<?x384xf8E4M3FN>, tensor<?x12xf8E8M0FNU>)
// CHECK:     fp8.scaled_matmul %[[DQ]], %[[WQT]], %[[DS]], %[[WST]] {a_granularity = #fp8.granularity<mx 1x32>, {{.*}}b_major = #fp8.major<mn>}
// CHECK-NOT: linalg.
func.func @folded(%x: tensor<?x256xbf16>, %w: tensor<384x256xbf16>, %dy: tensor<?x384xbf16>) -> (tensor<?x384xbf16>, tensor<?x256xbf16>) {
  %xq, %xs = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<?x256xbf16> -> rowwise(tensor<?x256xf8E4M3FN>, tensor<?x2xf32>)
  %wq, %ws = fp8.quantize %w {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>} : tensor<384x256xbf16> -> rowwise(tensor<384x256xf8E4M3FN>, tensor<3x2xf32>)
  %y = fp8.scaled_matmul %xq, %wq, %xs, %ws {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<>} : (tensor<?x256xf8E4M3FN>, tensor<384x256xf8E4M3FN>, tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x384xbf16>
  %dq, %ds = fp8.quantize %dy {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<?x384xbf16> -> rowwise(tensor<?x384xf8E4M3FN>, tensor<?x3xf32>)
  %e = tensor.empty() : tensor<2x3xf32>
  %wst = linalg.transpose ins(%ws : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) permutation = [1, 0]
  %dx = fp8.scaled_matmul %dq, %wq, %ds, %wst {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<>} : (tensor<?x384xf8E4M3FN>, tensor<384x256xf8E4M3FN>, tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x256xbf16>
  return %y, %dx : tensor<?x384xbf16>, tensor<?x256xbf16>
}

// -----

// A quantization whose scales something else reads too keeps its f32
// scales; the GEMM converts them.
// CHECK-LABEL: func.func @scales_also_returned
// CHECK:     fp8.quantize
// CHECK-NOT: scale_granularity
// CHECK-SAME: -> rowwise(tensor<?x256xf8E4M3FN>, tensor<?x2xf32>)
// CHECK:     fp8.scales_to_mx %{{.*}} : tensor<?x2xf32> -> tensor<?x8xf8E8M0FNU>
// CHECK:     fp8.scaled_matmul {{.*}} {a_granularity = #fp8.granularity<mx 1x32>
func.func @scales_also_returned(%x: tensor<?x256xbf16>, %b: tensor<128x256xf8E4M3FN>, %sb: tensor<1x2xf32>) -> (tensor<?x128xbf16>, tensor<?x2xf32>) {
  %xq, %xs = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<?x256xbf16> -> rowwise(tensor<?x256xf8E4M3FN>, tensor<?x2xf32>)
  %y = fp8.scaled_matmul %xq, %b, %xs, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<>} : (tensor<?x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<?x128xbf16>
  return %y, %xs : tensor<?x128xbf16>, tensor<?x2xf32>
}

// -----

// fp8.scales_to_mx needs a static row count for multi-row tiles: a GEMM
// whose B (128x128 tiles) has a run-time N is left alone.
// CHECK-LABEL: func.func @dynamic_tile_rows
// CHECK-NOT: fp8.scales_to_mx
// CHECK: b_granularity = #fp8.granularity<tile 128x128>
func.func @dynamic_tile_rows(%a: tensor<256x256xf8E4M3FN>, %b: tensor<?x256xf8E4M3FN>, %sa: tensor<256x2xf32>, %sb: tensor<?x2xf32>) -> tensor<256x?xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<>} : (tensor<256x256xf8E4M3FN>, tensor<?x256xf8E4M3FN>, tensor<256x2xf32>, tensor<?x2xf32>) -> tensor<256x?xbf16>
  return %0 : tensor<256x?xbf16>
}

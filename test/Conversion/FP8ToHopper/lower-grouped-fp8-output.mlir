// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul | FileCheck %s

// FP8 results of grouped GEMMs, quantized in the epilogue of the grouped
// kernels.

// m_contiguous, 1x128 blocks along N (N = 2112: a last block of 64
// columns): the launch writes D and its scale_inv [M, 17] (M from A); the
// kernel stores D through TMA and takes the scale_inv pointer before m;
// the metadata gives its MN-major storage [17, roundup(M, 4)].
// CHECK-LABEL: module attributes
// CHECK: func.func @blockwise
// CHECK: %[[M:.*]] = tensor.dim %arg0, %c0 : tensor<?x512xf8E4M3FN>
// CHECK: %[[D:.*]] = tensor.empty(%[[M]]) : tensor<?x2112xf8E4M3FN>
// CHECK: %[[S:.*]] = tensor.empty(%[[M]]) : tensor<?x17xf32>
// CHECK: fp8.launch @[[K:fp8_grouped_gemm_blockwise_e4m3_e4m3_e4m3_n2112_k512_t128x128x128_s[0-9]+_g4_q1x128]]_launch_into(%arg0, %arg1, %arg2, %arg3, %arg4, %[[D]], %[[S]]) outputs [5, 6]
// CHECK: gpu.func @[[K]](%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32) kernel
// CHECK-SAME: {dtype = "i32", name = "group_index", role = "input", shape = ["M"]}
// CHECK-SAME: {dtype = "e4m3", name = "d", role = "output", shape = ["M", 2112]}
// CHECK-SAME: {dtype = "f32", name = "result_scale_inv", role = "output", shape = [17, "roundup(M, 4)"]}
// CHECK-SAME: {kind = "pointer", name = "group_index", operand = "group_index"}, {kind = "pointer", name = "result_scale_inv", operand = "result_scale_inv"}, {kind = "i32", name = "m", value = "M"}]
// CHECK-SAME: name = "tma_d"
// The block amax over the quad, then the TMA store of the FP8 bytes.
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c2_i32
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
func.func @blockwise(%a: tensor<?x512xf8E4M3FN>, %b: tensor<4x2112x512xf8E4M3FN>, %sa: tensor<?x4xf32>, %sb: tensor<4x17x4xf32>, %g: tensor<?xi32>) -> (tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>) {
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<?x512xf8E4M3FN>, tensor<4x2112x512xf8E4M3FN>, tensor<?x4xf32>, tensor<4x17x4xf32>, tensor<?xi32>) -> (tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>)
  return %0, %1 : tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>
}

// -----

// m_contiguous, a given per-tensor scale (one for all groups): the launch
// passes result_scale after the group index, and the kernel writes the
// scalar scale_inv.
// CHECK-LABEL: module attributes
// CHECK: func.func @delayed
// CHECK: %[[D:.*]] = tensor.empty(%{{.*}}) : tensor<?x256xf8E5M2>
// CHECK: %[[S:.*]] = tensor.empty() : tensor<f32>
// CHECK: fp8.launch @[[K:fp8_grouped_gemm_tensorwise_e4m3_e4m3_e5m2_n256_k512_t128x[0-9]+x128_s[0-9]+_g3_fast_qtensor]]_launch_into(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %[[D]], %[[S]]) outputs [6, 7]
// CHECK: gpu.func @[[K]](
// CHECK-SAME: {dtype = "f32", name = "result_scale", role = "input", shape = []}, {dtype = "e5m2", name = "d", role = "output", shape = ["M", 256]}, {dtype = "f32", name = "result_scale_inv", role = "output", shape = []}
// CHECK-SAME: {kind = "pointer", name = "group_index", operand = "group_index"}, {kind = "pointer", name = "result_scale", operand = "result_scale"}, {kind = "pointer", name = "result_scale_inv", operand = "result_scale_inv"}, {kind = "i32", name = "m", value = "M"}]
// CHECK: arith.divf %cst{{.*}}, %{{.*}} : f32
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}}satfinite{{.*}}f8E5M2
func.func @delayed(%a: tensor<?x512xf8E4M3FN>, %b: tensor<3x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<3xf32>, %g: tensor<?xi32>, %qs: tensor<f32>) -> (tensor<?x256xf8E5M2>, tensor<f32>) {
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g result_scale %qs {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.delayed<>, result_granularity = #fp8.granularity<tensor>} : (tensor<?x512xf8E4M3FN>, tensor<3x256x512xf8E4M3FN>, tensor<f32>, tensor<3xf32>, tensor<?xi32>, tensor<f32>) -> (tensor<?x256xf8E5M2>, tensor<f32>)
  return %0, %1 : tensor<?x256xf8E5M2>, tensor<f32>
}

// -----

// m_masked, 1x128 blocks: scale_inv [4, M, 2] (M from A's second extent),
// stored per group [4, 2, roundup(M, 4)]. D is stored directly (a blockwise
// masked GEMM of fewer than 8 K blocks does not stage its tile); the
// group's scales start at group * 2 * roundup(M, 4) floats (64-bit), the
// row stride of its MN-major scales is roundup(M, 4) (M, not the count),
// and a block's scale is stored by one lane per quad for rows below the
// group's count only.
// CHECK-LABEL: module attributes
// CHECK: func.func @masked_blockwise
// CHECK: %[[M:.*]] = tensor.dim %arg0, %c1 : tensor<4x?x512xf8E4M3FN>
// CHECK: %[[D:.*]] = tensor.empty(%[[M]]) : tensor<4x?x256xf8E4M3FN>
// CHECK: %[[S:.*]] = tensor.empty(%[[M]]) : tensor<4x?x2xf32>
// CHECK: fp8.launch @[[K:fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_e4m3_n256_k512_t128x128x128_s[0-9]+_g4_q1x128]]_launch_into(%arg0, %arg1, %arg2, %arg3, %arg4, %[[D]], %[[S]]) outputs [5, 6]
// CHECK: gpu.func @[[K]](%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[SP:arg[0-9]+]]: !llvm.ptr<1>, %[[MP:arg[0-9]+]]: i32) kernel
// CHECK-SAME: {dtype = "e4m3", name = "d", role = "output", shape = [4, "M", 256]}
// CHECK-SAME: {dtype = "f32", name = "result_scale_inv", role = "output", shape = [4, 2, "roundup(M, 4)"]}
// CHECK-NOT: tma_d
// CHECK: nvvm.setmaxregister increase 232
// CHECK: scf.if %{{.*}} {
// CHECK: arith.minsi %{{.*}}, %[[MP]] : i32
// CHECK: %[[M64:.*]] = arith.extui %[[MP]] : i32 to i64
// CHECK-NEXT: arith.muli %[[G64:.*]], %[[M64]] : i64
// The A scales' group offset (4 K blocks per group), then the result's.
// CHECK: arith.muli %c4_i32{{.*}}, %{{.*}} : i32
// CHECK: %[[P1:.*]] = arith.addi %[[MP]], %c3_i32{{.*}} : i32
// CHECK: %[[P2:.*]] = arith.divui %[[P1]], %c4_i32{{.*}} : i32
// CHECK: %[[PAD:.*]] = arith.muli %[[P2]], %c4_i32{{.*}} : i32
// CHECK: %[[PER:.*]] = arith.muli %c2_i32{{.*}}, %[[PAD]] : i32
// CHECK: %[[PER64:.*]] = arith.extui %[[PER]] : i32 to i64
// CHECK: %[[OFF:.*]] = arith.muli %[[G64]], %[[PER64]] : i64
// CHECK: %[[BYTES:.*]] = arith.muli %[[OFF]], %c4_i64{{.*}} : i64
// CHECK: %[[GS:.*]] = llvm.getelementptr %[[SP]][%[[BYTES]]]
// CHECK: %[[R1:.*]] = arith.addi %[[MP]], %c3_i32{{.*}} : i32
// CHECK: %[[R2:.*]] = arith.divui %[[R1]], %c4_i32{{.*}} : i32
// CHECK: %[[STRIDE:.*]] = arith.muli %[[R2]], %c4_i32{{.*}} : i32
// CHECK: nvvm.shfl.sync bfly
// CHECK: nvvm.shfl.sync bfly
// CHECK: %[[NB:.*]] = arith.divui %{{.*}}, %c128_i32{{.*}} : i32
// CHECK: %[[BELOW:.*]] = arith.cmpi ult, %[[ROW:[0-9]+]], %{{[0-9]+}} : i32
// CHECK: %[[STORES:.*]] = arith.andi %{{.*}}, %[[BELOW]] : i1
// CHECK: scf.if %[[STORES]] {
// CHECK: %[[I0:.*]] = arith.muli %[[NB]], %[[STRIDE]] : i32
// CHECK: arith.addi %[[I0]], %[[ROW]] : i32
// CHECK: llvm.getelementptr %[[GS]]
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.store %{{.*}} : i16, !llvm.ptr<1>
func.func @masked_blockwise(%a: tensor<4x?x512xf8E4M3FN>, %b: tensor<4x256x512xf8E4M3FN>, %sa: tensor<4x?x4xf32>, %sb: tensor<4x2x4xf32>, %m: tensor<4xi32>) -> (tensor<4x?x256xf8E4M3FN>, tensor<4x?x2xf32>) {
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %m {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<4x?x512xf8E4M3FN>, tensor<4x256x512xf8E4M3FN>, tensor<4x?x4xf32>, tensor<4x2x4xf32>, tensor<4xi32>) -> (tensor<4x?x256xf8E4M3FN>, tensor<4x?x2xf32>)
  return %0, %1 : tensor<4x?x256xf8E4M3FN>, tensor<4x?x2xf32>
}

// -----

// DeepSeek-V3 expert shapes for ptxas-grouped-fp8-output.test: the up
// projection with 1x128 output blocks (m_contiguous; the 128x256 tile in
// column waves, two blocks per tile row), the down projection
// with a given output scale (m_masked, staged and stored by the consumers).
// CHECK-LABEL: module attributes
// CHECK: fp8.launch @fp8_grouped_gemm_blockwise_e4m3_e4m3_e4m3_n4096_k7168_t128x256x128_s{{[0-9]+}}_g8_q1x128_launch_into
// CHECK: fp8.launch @fp8_grouped_masked_gemm_rowwise_e4m3_e4m3_e4m3_n7168_k2048_t128x128x128_s{{[0-9]+}}_g4_fast_qtensor_launch_into
func.func @up_blockwise(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<8x4096x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<8x32x56xf32>, %g: tensor<?xi32>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>) {
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<?x7168xf8E4M3FN>, tensor<8x4096x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<8x32x56xf32>, tensor<?xi32>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>)
  return %0, %1 : tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>
}
func.func @down_masked_delayed(%a: tensor<4x?x2048xf8E4M3FN>, %b: tensor<4x7168x2048xf8E4M3FN>, %sa: tensor<4x?x1xf32>, %sb: tensor<4x7168x1xf32>, %m: tensor<4xi32>, %qs: tensor<f32>) -> (tensor<4x?x7168xf8E4M3FN>, tensor<f32>) {
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %m result_scale %qs {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.delayed<>, result_granularity = #fp8.granularity<tensor>} : (tensor<4x?x2048xf8E4M3FN>, tensor<4x7168x2048xf8E4M3FN>, tensor<4x?x1xf32>, tensor<4x7168x1xf32>, tensor<4xi32>, tensor<f32>) -> (tensor<4x?x7168xf8E4M3FN>, tensor<f32>)
  return %0, %1 : tensor<4x?x7168xf8E4M3FN>, tensor<f32>
}

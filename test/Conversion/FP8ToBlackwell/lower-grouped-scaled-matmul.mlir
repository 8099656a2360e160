// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-lower-scaled-matmul | FileCheck %s

// Rowwise, 3 groups of [256, 512] weights, on tcgen05 kind::f8f6f4. The
// launch takes the group index after the scales; B's tensor map is the
// stacked [3 * 256, 512] view.
// CHECK-LABEL: module attributes
// CHECK: fp8.launch @[[K:fp8_grouped_gemm_rowwise_e4m3_e4m3_bf16_n256_k512_t128x256x128_s3_g3_fast]]_launch_into(%arg0, %arg1, %arg2, %arg3, %arg4, %{{.*}}) outputs [5]
// CHECK: gpu.func @[[K]](%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr<1>, %[[BS:.*]]: !llvm.ptr<1>, %[[GI:.*]]: !llvm.ptr<1>, %{{.*}}: i32) kernel
// CHECK-SAME: cluster = [1, 1, 1]
// CHECK-SAME: group_layout = "m_contiguous", groups = 3 : i64
// CHECK-SAME: {dtype = "f32", name = "b_scale_inv", role = "input", shape = [3, 256]}
// CHECK-SAME: {box = [128, 256], dims = [512, 768], {{.*}} name = "tma_b"
// Epilogue warpgroups: the tile's group from its first row (tile row *
// 128); only a tile of one of the 3 groups (unsigned: -1 is none) takes an
// accumulator, with its group's row scales (B scales + group * 256 f32).
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %c128_i32{{.*}} : i32
// CHECK: %[[GP:.*]] = llvm.getelementptr %[[GI]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK: %[[G:.*]] = llvm.load %[[GP]] : !llvm.ptr<1> -> i32
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[G]], %c3_i32 : i32
// CHECK: %[[NEXT:.*]] = scf.if %[[IN]] -> (i32) {
// CHECK: %[[OFF:.*]] = arith.muli %[[G]], %c256_i32 : i32
// CHECK: llvm.getelementptr %[[BS]][%{{.*}}]
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvvm.tcgen05.ld
// CHECK: } else {
// CHECK-NEXT: scf.yield %{{.*}} : i32
// Producer: the same group load; a tile of a group loads B at rows
// n + group * 256.
// CHECK: llvm.getelementptr %[[GI]]
// CHECK: %[[PG:.*]] = llvm.load
// CHECK: %[[PIN:.*]] = arith.cmpi ult, %[[PG]], %c3_i32 : i32
// CHECK: scf.if %[[PIN]] -> (i32) {
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %c256_i32 : i32
// CHECK: %[[GROW:.*]] = arith.muli %[[PG]], %c256_i32{{.*}} : i32
// CHECK: %[[BROW:.*]] = arith.addi %[[N]], %[[GROW]] : i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg1, %{{.*}}, box[%{{.*}}, %[[BROW]]]
// MMA warp: the same skip, carrying the stage iteration and the accumulator
// count past tiles of no group.
// CHECK: llvm.getelementptr %[[GI]]
// CHECK: %[[MG:.*]] = llvm.load
// CHECK: %[[MIN:.*]] = arith.cmpi ult, %[[MG]], %c3_i32 : i32
// CHECK: scf.if %[[MIN]] -> (i32, i32) {
// CHECK: nvvm.tcgen05.mma {{.*}}kind = #nvvm.tcgen05_mma_kind<f8f6f4>
// CHECK: nvvm.tcgen05.commit
// CHECK: } else {
// CHECK-NEXT: scf.yield %{{.*}}, %{{.*}} : i32, i32
func.func @rowwise(%a: tensor<?x512xf8E4M3FN>, %b: tensor<3x256x512xf8E4M3FN>, %sa: tensor<?x1xf32>, %sb: tensor<3x256x1xf32>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>} : (tensor<?x512xf8E4M3FN>, tensor<3x256x512xf8E4M3FN>, tensor<?x1xf32>, tensor<3x256x1xf32>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// -----

// MXFP8: A's and B's UE8M0 atoms by TMA; B's atoms of all groups in one
// 3-D tensor map (3 groups x 2 atom rows of 128 N rows), the group's atom
// rows first (group * 2), then the tile's (N tile * 2); the block-scaled
// MMA reads them from Tensor Memory after tcgen05.cp.
// CHECK-LABEL: module attributes
// CHECK: gpu.func @fp8_grouped_gemm_mxfp8_e4m3_e4m3_bf16_n256_k512_t128x256x128_s3_g3_fast(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[SFA:.*]]: !llvm.ptr, %[[SFB:.*]]: !llvm.ptr, %[[GI:.*]]: !llvm.ptr<1>, %{{.*}}: i32) kernel
// CHECK-SAME: {dtype = "ue8m0", name = "b_scale_inv", role = "input", shape = [3, 2, 4, 512]}
// CHECK-SAME: {box = [128, 4, 2], dims = [128, 16, 6], {{.*}} name = "tma_sfb"
// The epilogue (its scales were applied in the MMA), then the producer.
// CHECK: nvvm.tcgen05.ld
// CHECK: %[[PG:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: %[[PIN:.*]] = arith.cmpi ult, %[[PG]], %c3_i32 : i32
// CHECK: scf.if %[[PIN]] -> (i32) {
// CHECK: %[[ATOMROW:.*]] = arith.muli %[[PG]], %c2_i32 : i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[SFA]], %{{.*}}, box[
// CHECK: %[[TILEROW:.*]] = arith.muli %{{.*}}, %c2_i32{{.*}} : i32
// CHECK: %[[SFBROW:.*]] = arith.addi %[[TILEROW]], %[[ATOMROW]] : i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[SFB]], %{{.*}}, box[%{{.*}}, %{{.*}}, %[[SFBROW]]]
// CHECK: nvvm.tcgen05.cp
// CHECK: nvvm.tcgen05.mma.block_scale {{.*}}kind = #nvvm.block_scale_kind<mxf8f6f4>
func.func @mxfp8(%a: tensor<?x512xf8E4M3FN>, %b: tensor<3x256x512xf8E4M3FN>, %sa: tensor<?x16xf8E8M0FNU>, %sb: tensor<3x256x16xf8E8M0FNU>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>} : (tensor<?x512xf8E4M3FN>, tensor<3x256x512xf8E4M3FN>, tensor<?x16xf8E8M0FNU>, tensor<3x256x16xf8E8M0FNU>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// -----

// UE8M0 blockwise scales lowered directly (fp8-blockwise-to-mx not run):
// the same block-scaled kernel, its metadata saying that the host converts
// the scales to atoms.
// CHECK-LABEL: module attributes
// CHECK: gpu.func @fp8_grouped_gemm_blockwise_e4m3_e4m3_bf16_n256_k512_t128x256x128_s3_g3_mx(
// CHECK-SAME: scale_conversion = "host: blockwiseScalesToMx + layoutScaleFactors"
// CHECK-SAME: {dtype = "ue8m0", name = "b_scale_inv", role = "input", shape = [3, 2, 4, 512]}
// CHECK: nvvm.tcgen05.mma.block_scale
func.func @blockwise_ue8m0(%a: tensor<?x512xf8E4M3FN>, %b: tensor<3x256x512xf8E4M3FN>, %sa: tensor<?x4xf8E8M0FNU>, %sb: tensor<3x2x4xf8E8M0FNU>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x512xf8E4M3FN>, tensor<3x256x512xf8E4M3FN>, tensor<?x4xf8E8M0FNU>, tensor<3x2x4xf8E8M0FNU>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

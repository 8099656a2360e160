// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul | FileCheck %s

// Rowwise, 3 groups of [256, 512] weights: the launch takes the group
// index after the scales and writes D into a new tensor.
// CHECK-LABEL: module attributes
// CHECK: func.func private @[[K:fp8_grouped_gemm_rowwise_e4m3_e4m3_bf16_n256_k512_t128x256x128_s4_g3_fast]]_launch_into({{.*}}, memref<3x256x512xf8E4M3FN> {bufferization.access = "read"}, {{.*}}, memref<3x256x1xf32> {bufferization.access = "read"}, memref<?xi32> {bufferization.access = "read"}, memref<?x256xbf16> {bufferization.access = "write"})
// CHECK: func.func @rowwise
// CHECK: %[[M:.*]] = tensor.dim %arg0, %c0 : tensor<?x512xf8E4M3FN>
// CHECK: %[[D:.*]] = tensor.empty(%[[M]]) : tensor<?x256xbf16>
// CHECK: fp8.launch @[[K]]_launch_into(%arg0, %arg1, %arg2, %arg3, %arg4, %[[D]]) outputs [5]
// The group index is a pointer parameter before m; B's tensor map is the
// stacked [3 * 256, 512] view; no cluster, no launch variants.
// CHECK: gpu.func @[[K]](%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr<1>, %[[BS:.*]]: !llvm.ptr<1>, %[[GI:.*]]: !llvm.ptr<1>, %{{.*}}: i32) kernel
// CHECK-SAME: cluster = [1, 1, 1]
// CHECK-SAME: group_layout = "m_contiguous", groups = 3 : i64
// CHECK-SAME: {dtype = "e4m3", name = "b", role = "input", shape = [3, 256, 512]}
// CHECK-SAME: {dtype = "f32", name = "b_scale_inv", role = "input", shape = [3, 256]}
// CHECK-SAME: {dtype = "i32", name = "group_index", role = "input", shape = ["M"]}
// CHECK-SAME: {kind = "pointer", name = "group_index", operand = "group_index"}, {kind = "i32", name = "m", value = "M"}]
// CHECK-SAME: {box = [128, 256], dims = [512, 768], {{.*}} name = "tma_b"
// CHECK-NOT: variants
// Producer: the tile's group from its first row (tile row * 128); a tile
// outside the groups (unsigned compare with 3: -1 is not one) loads no K
// block; B's rows are offset by group * N.
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %c128_i32{{.*}} : i32
// CHECK: %[[GP:.*]] = llvm.getelementptr %[[GI]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK: %[[G:.*]] = llvm.load %[[GP]] : !llvm.ptr<1> -> i32
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[G]], %c3_i32 : i32
// CHECK: %[[KEND:.*]] = arith.select %[[IN]], %c4_i32, %c0_i32{{.*}} : i32
// CHECK: scf.for %{{.*}} = %c0_i32{{.*}} to %[[KEND]]
// CHECK: %[[BOFF:.*]] = arith.muli %[[G]], %c256_i32{{.*}} : i32
// CHECK: %[[BROW:.*]] = arith.addi %{{.*}}, %[[BOFF]] : i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0, %{{.*}}, box[%{{.*}}, %{{.*}}]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg1, %{{.*}}, box[%{{.*}}, %[[BROW]]]
// Consumers: the same empty K loop outside the groups, and the epilogue
// only inside them, with the group's B scales (group * 256 floats on).
// CHECK: nvvm.setmaxregister increase 232
// CHECK: %[[CG:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: %[[CIN:.*]] = arith.cmpi ult, %[[CG]], %c3_i32 : i32
// CHECK: scf.for
// CHECK: nvvm.wgmma.mma_async
// Drains the last block and frees its stage only when there was one.
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.if
// CHECK: nvvm.mbarrier.arrive
// CHECK: scf.if %[[CIN]] {
// CHECK: %[[EG:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: %[[SOFF:.*]] = arith.muli %[[EG]], %c256_i32 : i32
// CHECK: llvm.getelementptr %[[BS]][%{{.*}}]
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta

func.func @rowwise(%a: tensor<?x512xf8E4M3FN>, %b: tensor<3x256x512xf8E4M3FN>, %sa: tensor<?x1xf32>, %sb: tensor<3x256x1xf32>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>} : (tensor<?x512xf8E4M3FN>, tensor<3x256x512xf8E4M3FN>, tensor<?x1xf32>, tensor<3x256x1xf32>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// -----

// Blockwise: the group's 128x128 B scales start at group * 2 * 4 floats
// (ceil(256/128) x ceil(512/128) per group), copied with the stage. The
// tile is 128x256 in column waves, whose producer keeps 24 registers.
// CHECK-LABEL: module attributes
// CHECK: gpu.func @fp8_grouped_gemm_blockwise_e4m3_e4m3_bf16_n256_k512_t128x256x128_s{{[0-9]+}}_g2(
// CHECK-SAME: {dtype = "f32", name = "b_scale_inv", role = "input", shape = [2, 2, 4]}
// CHECK: nvvm.setmaxregister decrease 24
// CHECK: %[[G:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: arith.cmpi ult, %[[G]], %c2_i32{{.*}} : i32
// CHECK: scf.for
// CHECK: arith.muli %[[G]], %c8_i32{{.*}} : i32
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: nvvm.cp.async.shared.global
func.func @blockwise(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<?x4xf32>, %sb: tensor<2x2x4xf32>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x4xf32>, tensor<2x2x4xf32>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// -----

// Tile M 64 (configured; the heuristic picks it too for a static M of few
// tiles): a tile reads its group at the first row of its 128-row block
// (tile row * 64, rounded down to a multiple of 128), not at its own first
// row, which in a group's last block may be a padding row (-1) of that
// group: the block's second tile is the group's (its rows computed and
// written), in the producer and the consumers alike.
// CHECK-LABEL: module attributes
// CHECK: gpu.func @fp8_grouped_gemm_blockwise_e4m3_e4m3_bf16_n256_k512_t64x128x128_s4_g8(
// CHECK-SAME: %[[GI:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: i32) kernel
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %c64_i32{{.*}} : i32
// CHECK-NEXT: %[[MASK:.*]] = arith.constant -128 : i32
// CHECK-NEXT: %[[BLOCK:.*]] = arith.andi %[[ROW]], %[[MASK]] : i32
// CHECK-NEXT: %[[ROW64:.*]] = arith.extui %[[BLOCK]] : i32 to i64
// CHECK-NEXT: arith.constant 4 : i64
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[ROW64]], %{{.*}} : i64
// CHECK-NEXT: %[[GP:.*]] = llvm.getelementptr %[[GI]][%[[OFF]]]
// CHECK-NEXT: %[[G:.*]] = llvm.load %[[GP]] : !llvm.ptr<1> -> i32
// CHECK-NEXT: arith.constant 8 : i32
// CHECK-NEXT: arith.cmpi ult, %[[G]], %{{.*}} : i32
// CHECK: nvvm.setmaxregister increase
// CHECK: %[[CMASK:.*]] = arith.constant -128 : i32
// CHECK-NEXT: %[[CBLOCK:.*]] = arith.andi %{{.*}}, %[[CMASK]] : i32
// CHECK-NEXT: arith.extui %[[CBLOCK]] : i32 to i64
// CHECK-NEXT: arith.constant 4 : i64
// CHECK-NEXT: %[[COFF:.*]] = arith.muli
// CHECK-NEXT: %[[CGP:.*]] = llvm.getelementptr %[[GI]][%[[COFF]]]
// CHECK-NEXT: llvm.load %[[CGP]] : !llvm.ptr<1> -> i32
func.func @tile_m_64(%a: tensor<1280x512xf8E4M3FN>, %b: tensor<8x256x512xf8E4M3FN>, %sa: tensor<1280x4xf32>, %sb: tensor<8x2x4xf32>, %g: tensor<1280xi32>) -> tensor<1280x256xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 64x128x128, stages = 4>} : (tensor<1280x512xf8E4M3FN>, tensor<8x256x512xf8E4M3FN>, tensor<1280x4xf32>, tensor<8x2x4xf32>, tensor<1280xi32>) -> tensor<1280x256xbf16>
  return %d : tensor<1280x256xbf16>
}

// -----

// m_contiguous with a 1x2 cluster (opt-in): the two CTAs take N-adjacent
// tiles of the same rows, hence of the same group; each loads half of the
// A tile and multicasts it to both, B (the group's rows) on its own. N =
// 2112 is 17 tiles of 128: the last pair's second CTA lies past N.
// CHECK-LABEL: func.func @cluster_1x2
// CHECK: gpu.func @fp8_grouped_gemm_blockwise_e4m3_e4m3_bf16_n2112_k7168_t128x128x128_s5_g4_c1x2(
// CHECK-SAME: cluster = [2, 1, 1]
// CHECK: nvvm.cluster.arrive
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0, %{{.*}}, box[%{{.*}}, %{{.*}}] multicast_mask = %c3_i16
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg1, %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
func.func @cluster_1x2(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<4x2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<4x17x56xf32>, %g: tensor<?xi32>) -> tensor<?x2112xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 5, cluster = 1x2>} : (tensor<?x7168xf8E4M3FN>, tensor<4x2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<4x17x56xf32>, tensor<?xi32>) -> tensor<?x2112xbf16>
  return %d : tensor<?x2112xbf16>
}

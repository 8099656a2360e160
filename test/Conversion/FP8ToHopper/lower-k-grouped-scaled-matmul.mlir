// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul | FileCheck %s

// Blockwise 1x128 x 1x128, k_grouped, 3 groups ([M, K] x [256, K], K the
// tokens of all groups): the launch writes D [3, M, 256] (M from A).
// CHECK-LABEL: module attributes
// CHECK: func.func private @[[K:fp8_grouped_k_gemm_blockwise_1d1d_e4m3_e4m3_f32_n256_kdyn_t128x128x128_s[0-9]+_g3_p1]]_launch_into(memref<?x?xf8E4M3FN> {bufferization.access = "read"}, memref<256x?xf8E4M3FN> {bufferization.access = "read"}, memref<?x?xf32> {bufferization.access = "read"}, memref<256x?xf32> {bufferization.access = "read"}, memref<3xi32> {bufferization.access = "read"}, memref<3x?x256xf32> {bufferization.access = "write"})
// CHECK: func.func @blockwise
// CHECK: %[[M:.*]] = tensor.dim %arg0, %c0 : tensor<?x?xf8E4M3FN>
// CHECK: %[[D:.*]] = tensor.empty(%[[M]]) : tensor<3x?x256xf32>
// CHECK: fp8.launch @[[K]]_launch_into(%arg0, %arg1, %arg2, %arg3, %arg4, %[[D]]) outputs [5]
// The kernel takes K (i32, after m); D is a pointer (direct stores).
// Metadata: A [M, K] and B [256, K] with K bound at launch, the 1x128
// scales MN-major over all columns, the sizes ks [3], D [3, M, 256], one
// tensor map each over all of A and B.
// CHECK: gpu.func @[[K]](%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[DP:.*]]: !llvm.ptr<1>, %[[AS:.*]]: !llvm.ptr<1>, %[[BS:.*]]: !llvm.ptr<1>, %[[KS:.*]]: !llvm.ptr<1>, %[[MP:.*]]: i32, %[[KP:.*]]: i32) kernel
// CHECK-SAME: group_layout = "k_grouped", groups = 3 : i64, k = "K", m = "M", n = 256 : i64
// CHECK-SAME: {dtype = "e4m3", name = "a", role = "input", shape = ["M", "K"]}
// CHECK-SAME: {dtype = "e4m3", name = "b", role = "input", shape = [256, "K"]}
// CHECK-SAME: {alignment = 16 : i64, dtype = "f32", name = "a_scale_inv", role = "input", shape = ["ceildiv(K, 128)", "roundup(M, 4)"]}
// CHECK-SAME: {alignment = 16 : i64, dtype = "f32", name = "b_scale_inv", role = "input", shape = ["ceildiv(K, 128)", 256]}
// CHECK-SAME: {dtype = "i32", name = "ks", role = "input", shape = [3]}
// CHECK-SAME: {dtype = "f32", name = "d", role = "output", shape = [3, "M", 256]}
// CHECK-SAME: {kind = "i32", name = "m", value = "M"}, {kind = "i32", multiple_of = 128 : i64, name = "k", reason = "the columns of every group are a multiple of 128", value = "K"}]
// CHECK-SAME: {box = [128, 128], dims = ["K", "M"], {{[^}]*}} name = "tma_a", {{[^}]*}} strides_bytes = ["K"]
// CHECK-SAME: {box = [128, 128], dims = ["K", 256], {{[^}]*}} name = "tma_b", {{[^}]*}} strides_bytes = ["K"]
// CHECK-NOT: tma_d
// CHECK-NOT: variants
// Producer: the tile's group and tile row within it (3 groups of
// ceil(M / 128) tile rows); the group's first column, the sizes of the
// groups before it summed (a negative size as 0, clamped to K); its K
// blocks [first / 128, (first + size) / 128); A and B loaded at (k, row).
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: %[[TPG:.*]] = arith.divui %{{.*}}, %c128_i32{{.*}} : i32
// CHECK-NEXT: %[[G:.*]] = arith.divui %{{.*}}, %[[TPG]] : i32
// CHECK-NEXT: %[[LT:.*]] = arith.remui %{{.*}}, %[[TPG]] : i32
// CHECK: %[[BEGIN:.*]] = scf.for %[[I:.*]] = %c0_i32{{.*}} to %[[G]] step %c1_i32{{.*}} iter_args(%[[SUM:.*]] = %c0_i32{{.*}}) -> (i32)
// CHECK: llvm.getelementptr %[[KS]]
// CHECK: %[[SZ:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: %[[POS:.*]] = arith.maxsi %[[SZ]], %c0_i32{{.*}} : i32
// CHECK: %[[ADD:.*]] = arith.addi %[[SUM]], %[[POS]] : i32
// CHECK: %[[CL:.*]] = arith.minui %[[ADD]], %[[KP]] : i32
// CHECK: scf.yield %[[CL]] : i32
// CHECK: llvm.getelementptr %[[KS]]
// CHECK: %[[GSZ:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: %[[GPOS:.*]] = arith.maxsi %[[GSZ]], %c0_i32{{.*}} : i32
// CHECK: %[[GEND:.*]] = arith.addi %[[BEGIN]], %[[GPOS]] : i32
// CHECK: %[[END:.*]] = arith.minui %[[GEND]], %[[KP]] : i32
// CHECK: %[[KB:.*]] = arith.divui %[[BEGIN]], %c128_i32{{.*}} : i32
// CHECK: %[[KE:.*]] = arith.divui %[[END]], %c128_i32{{.*}} : i32
// CHECK: scf.for %[[KBLK:.*]] = %[[KB]] to %[[KE]]
// CHECK: %[[MOFF:.*]] = arith.muli %[[LT]], %c128_i32{{.*}} : i32
// CHECK: %[[KOFF:.*]] = arith.muli %[[KBLK]], %c128_i32{{.*}} : i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0, %{{.*}}, box[%[[KOFF]], %[[MOFF]]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg1, %{{.*}}, box[%[[KOFF]], %{{.*}}]
// The 1x128 scales of the block at its index in all of K.
// CHECK: arith.muli %[[KBLK]], %{{.*}} : i32
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// Consumers: the K loop over the group's blocks, then the epilogue of
// every tile (no skip): D at the 64-bit offset group * M rows, rows
// guarded by M, direct stores.
// CHECK: nvvm.setmaxregister increase 232
// CHECK: scf.for
// CHECK: arith.minui %{{.*}}, %[[KP]] : i32
// CHECK: scf.for
// CHECK: nvvm.wgmma.mma_async
// CHECK: %[[M64:.*]] = arith.extui %[[MP]] : i32 to i64
// CHECK-NEXT: %[[R64:.*]] = arith.muli %{{.*}}, %[[M64]] : i64
// CHECK: arith.muli %[[R64]], %c1024_i64 : i64
// CHECK: llvm.getelementptr %[[DP]][%{{.*}}]
// CHECK: arith.cmpi ult, %{{.*}}, %[[MP]] : i32
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: llvm.store
func.func @blockwise(%a: tensor<?x?xf8E4M3FN>, %b: tensor<256x?xf8E4M3FN>, %sa: tensor<?x?xf32>, %sb: tensor<256x?xf32>, %g: tensor<3xi32>) -> tensor<3x?x256xf32> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x?xf8E4M3FN>, tensor<256x?xf8E4M3FN>, tensor<?x?xf32>, tensor<256x?xf32>, tensor<3xi32>) -> tensor<3x?x256xf32>
  return %d : tensor<3x?x256xf32>
}

// -----

// Per-tensor: A's and B's scales one per group ([2] each), read at the
// group in the epilogue; a static K in the IR still gives the run-time-K
// kernel.
// CHECK-LABEL: module attributes
// CHECK: gpu.func @fp8_grouped_k_gemm_tensorwise_e4m3_e4m3_bf16_n512_kdyn_t{{[0-9]+}}x{{[0-9]+}}x128_s{{[0-9]+}}_g2_fast(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr<1>, %[[AS:.*]]: !llvm.ptr<1>, %[[BS:.*]]: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i32) kernel
// CHECK-SAME: {dtype = "f32", name = "a_scale_inv", role = "input", shape = [2]}
// CHECK-SAME: {dtype = "f32", name = "b_scale_inv", role = "input", shape = [2]}
// CHECK: nvvm.setmaxregister increase
// CHECK: nvvm.wgmma.mma_async
// CHECK: %[[GB:.*]] = arith.muli %[[EG:.*]], %c1_i32{{.*}} : i32
// CHECK: llvm.getelementptr %[[BS]]
// CHECK: llvm.getelementptr %[[AS]]
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: arith.mulf
func.func @tensorwise(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>, %sa: tensor<2xf32>, %sb: tensor<2xf32>, %g: tensor<2xi32>) -> tensor<2x256x512xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<2xf32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2x256x512xbf16>
  return %d : tensor<2x256x512xbf16>
}

// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-lower-scaled-matmul | FileCheck %s

// MXFP8, TN, bf16 output: tile 128x256x128, 3 stages. The scale operands
// are the 128x4 UE8M0 atoms, [ceil(MN/128), ceil(K/128), 512] bytes, read
// through rank-3 tensor maps (128-byte atom rows, 4 per K block, atoms
// along MN) that replace the scale pointers as by-value parameters 3 and 4.
// CHECK-LABEL: module attributes {fp8.target = #fp8.target<chip = "sm_100a", sm_count = 148, max_shared_memory_per_block = 232448, ptx_features = "+ptx88">, gpu.container_module}
// CHECK: func.func private @[[K:fp8_gemm_mxfp8_e4m3_e4m3_bf16_n4096_k4096_t128x256x128_s3_fast]]_launch_into(
// CHECK-SAME: memref<?x128xf8E8M0FNU> {bufferization.access = "read"}, memref<4096x128xf8E8M0FNU> {bufferization.access = "read"}
// CHECK: fp8.launch @[[K]]_launch_into(%arg0, %arg1, %arg2, %arg3, %{{.*}}) outputs [4]
// CHECK: gpu.func @[[K]](%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i32) kernel
// CHECK-SAME: fp8.grid_constant_args = array<i32: 0, 1, 2, 3, 4>
// 3 x (48 KiB of A/B + 512 B of A atoms + 1 KiB of B atoms) + 64 KiB
// staging + barriers.
// CHECK-SAME: dynamic_shared_memory_bytes = 217688
// CHECK-SAME: a_granularity = "mx 1x32"
// CHECK-SAME: b_granularity = "mx 1x32"
// CHECK-SAME: {dtype = "ue8m0", name = "a_scale_inv", role = "input", shape = ["M_ATOMS", 32, 512]}
// CHECK-SAME: {dtype = "ue8m0", name = "b_scale_inv", role = "input", shape = [32, 32, 512]}
// CHECK-SAME: {kind = "tensor_map", name = "tma_sfa", passing = "grid_constant", tensor_map = "tma_sfa"}
// CHECK-SAME: {kind = "tensor_map", name = "tma_sfb", passing = "grid_constant", tensor_map = "tma_sfb"}
// CHECK-SAME: {kind = "i32", name = "m", value = "M"}
// CHECK-SAME: {box = [128, 4, 1], dims = [128, 128, "M_ATOMS"], dtype = "ue8m0", element_strides = [1, 1, 1], interleave = "none", l2_promotion = "256B", name = "tma_sfa", oob_fill = "zero", operand = "a_scale_inv", rank = 3 : i64, strides_bytes = [128, 16384], swizzle = "none"}
// CHECK-SAME: {box = [128, 4, 2], dims = [128, 128, 32], dtype = "ue8m0", element_strides = [1, 1, 1], interleave = "none", l2_promotion = "256B", name = "tma_sfb", oob_fill = "zero", operand = "b_scale_inv", rank = 3 : i64, strides_bytes = [128, 16384], swizzle = "none"}
// Stage ring, then one accumulator (tile N 256: 256 accumulator columns
// plus 3 scale slots of 4 + 8 columns leave no room for a second).
// CHECK-COUNT-6: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK-NEXT: arith.constant
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: arith.constant
// CHECK-NEXT: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.prefetch tensormap, %arg3
// CHECK-NEXT: nvvm.prefetch tensormap, %arg4
// CHECK: nvvm.tcgen05.alloc %{{.*}}, %c512_i32 : !llvm.ptr<3>, i32
// Producer: the A/B tiles and the stage's scale atoms (3-D boxes at
// K group kBlock) complete on one barrier armed with all their bytes.
// CHECK: } else {
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[FULL:.*]], %c50688_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg{{[01]}}, %[[FULL]], box[%{{.*}}, %{{.*}}] :
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg3, %[[FULL]], box[%{{.*}}, %{{.*}}, %{{.*}}] :
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg4, %[[FULL]], box[%{{.*}}, %{{.*}}, %{{.*}}] :
// MMA thread: after the full barrier, one tcgen05.cp per atom (A: 1, B: 2)
// into the stage's TMEM scale slot, then 4 block-scaled MMAs whose
// descriptors differ only in a_sf_id/b_sf_id (bits 29-30 / 4-5):
// 0x08C00000 (M 128, N 256, UE8M0, ids 0), 0x28C00010 (ids 1),
// 0x48C00020 (ids 2), 0x68C00030 (ids 3). One commit frees the stage.
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-COUNT-3: nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
// CHECK-NOT: nvvm.tcgen05.fence
// CHECK: nvvm.tcgen05.mma.block_scale %[[D:.*]], %{{.*}}, %{{.*}}, %c146800640_i32, %{{.*}}, %[[SFA:.*]], %[[SFB:.*]] {blockScale = #nvvm.tcgen05_mma_block_scale<block32>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.block_scale_kind<mxf8f6f4>}
// CHECK: nvvm.tcgen05.mma.block_scale %[[D]], %{{.*}}, %{{.*}}, %c683671568_i32, %true, %[[SFA]], %[[SFB]]
// CHECK: nvvm.tcgen05.mma.block_scale %[[D]], %{{.*}}, %{{.*}}, %c1220542496_i32, %true, %[[SFA]], %[[SFB]]
// CHECK: nvvm.tcgen05.mma.block_scale %[[D]], %{{.*}}, %{{.*}}, %c1757413424_i32, %true, %[[SFA]], %[[SFB]]
// CHECK-NOT: tcgen05.mma
// CHECK: nvvm.tcgen05.commit
// CHECK: nvvm.tcgen05.commit
// CHECK: nvvm.tcgen05.dealloc %{{.*}}, %c512_i32
func.func @mxfp8_tn(%a: tensor<?x4096xf8E4M3FN>, %b: tensor<4096x4096xf8E4M3FN>, %sa: tensor<?x128xf8E8M0FNU>, %sb: tensor<4096x128xf8E8M0FNU>) -> tensor<?x4096xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>} : (tensor<?x4096xf8E4M3FN>, tensor<4096x4096xf8E4M3FN>, tensor<?x128xf8E8M0FNU>, tensor<4096x128xf8E8M0FNU>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

// -----

// NT (B stored [K, N]), E5M2 B, f32 output, tile N 128: two accumulators
// (2 x 128 columns + 4 slots of 4 + 4 columns), direct stores (no staging
// buffer, so no tma_d: the scale maps are parameters 3 and 4 after `d`).
// Descriptor 0x08A10400: M 128, UE8M0, N 128, B MN-major (bit 16), B E5M2.
// CHECK: gpu.func @[[K:fp8_gemm_mxfp8_e4m3_e5m2_f32_n2048_k1024_t128x128x128_s4_fast_bmn]](%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i32) kernel
// CHECK-SAME: fp8.grid_constant_args = array<i32: 0, 1, 3, 4>
// CHECK-SAME: {dtype = "ue8m0", name = "b_scale_inv", role = "input", shape = [16, 8, 512]}
// CHECK-SAME: {kind = "pointer", name = "d", operand = "d"}, {kind = "tensor_map", name = "tma_sfa"
// CHECK-SAME: {box = [128, 4, 1], dims = [128, 32, 16], dtype = "ue8m0"
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32
// CHECK: nvvm.tcgen05.alloc %{{.*}}, %c512_i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c33792_i32
// CHECK-COUNT-2: nvvm.tcgen05.cp
// CHECK-NOT: nvvm.tcgen05.cp
// CHECK: nvvm.tcgen05.mma.block_scale %{{.*}}, %{{.*}}, %{{.*}}, %c144770048_i32,
func.func @mxfp8_nt(%a: tensor<?x1024xf8E4M3FN>, %b: tensor<1024x2048xf8E5M2>, %sa: tensor<?x32xf8E8M0FNU>, %sb: tensor<2048x32xf8E8M0FNU>) -> tensor<?x2048xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x128x128, stages = 4>} : (tensor<?x1024xf8E4M3FN>, tensor<1024x2048xf8E5M2>, tensor<?x32xf8E8M0FNU>, tensor<2048x32xf8E8M0FNU>) -> tensor<?x2048xf32>
  return %0 : tensor<?x2048xf32>
}

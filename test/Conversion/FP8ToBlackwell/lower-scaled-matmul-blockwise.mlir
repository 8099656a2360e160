// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-lower-scaled-matmul | FileCheck %s

// Blockwise (DeepSeek-V3 1x128 / 128x128) power-of-two scales on the
// block-scaled MMA without requantizing the FP8 data ("Blockwise to MX on
// Blackwell", docs/design.md). Design: the host converts the
// scales (emulation::blockwiseScalesToMx, then layoutScaleFactors) into the
// MXFP8 128x4 UE8M0 atom layout, a 1x128 tile's scale repeated over the four
// 32-K blocks of its 128-K group and a 128x128 tile's broadcast to its 128
// rows; the kernel is the MXFP8 kernel (3-D TMA of the atoms, tcgen05.cp to
// TMEM, four block_scale MMAs per stage with sf_id 0..3, all reading equal
// bytes). The metadata records the layout, the conversion and that the
// four bytes of a 128-K group are equal; the granularities stay blockwise.

// UE8M0 scale operands, TN, bf16 output: tile 128x256x128, 3 stages.
// CHECK-LABEL: module attributes {fp8.target = #fp8.target<chip = "sm_100a", sm_count = 148, max_shared_memory_per_block = 232448, ptx_features = "+ptx88">, gpu.container_module}
// CHECK: func.func private @[[K:fp8_gemm_blockwise_e4m3_e4m3_bf16_n2048_k7168_t128x256x128_s3_mx]]_launch_into(
// CHECK-SAME: memref<?x56xf8E8M0FNU> {bufferization.access = "read"}, memref<16x56xf8E8M0FNU> {bufferization.access = "read"}
// CHECK: gpu.func @[[K]](%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i32) kernel
// CHECK-SAME: fp8.grid_constant_args = array<i32: 0, 1, 2, 3, 4>
// CHECK-SAME: dynamic_shared_memory_bytes = 217688
// CHECK-SAME: a_granularity = "tile 1x128"
// CHECK-SAME: accumulation = "promoted(128)"
// CHECK-SAME: b_granularity = "tile 128x128"
// CHECK-SAME: scale_conversion = "host: blockwiseScalesToMx + layoutScaleFactors", scale_k_group_bytes_equal = true, scale_layout = "mx_atom_128x4_ue8m0"
// CHECK-SAME: {dtype = "ue8m0", name = "a_scale_inv", role = "input", shape = ["M_ATOMS", 56, 512]}
// CHECK-SAME: {dtype = "ue8m0", name = "b_scale_inv", role = "input", shape = [16, 56, 512]}
// CHECK-SAME: {kind = "tensor_map", name = "tma_sfa", passing = "grid_constant", tensor_map = "tma_sfa"}
// CHECK-SAME: {kind = "tensor_map", name = "tma_sfb", passing = "grid_constant", tensor_map = "tma_sfb"}
// CHECK-SAME: {box = [128, 4, 1], dims = [128, 224, "M_ATOMS"], dtype = "ue8m0", element_strides = [1, 1, 1], interleave = "none", l2_promotion = "256B", name = "tma_sfa", oob_fill = "zero", operand = "a_scale_inv", rank = 3 : i64, strides_bytes = [128, 28672], swizzle = "none"}
// CHECK-SAME: {box = [128, 4, 2], dims = [128, 224, 16], dtype = "ue8m0", element_strides = [1, 1, 1], interleave = "none", l2_promotion = "256B", name = "tma_sfb", oob_fill = "zero", operand = "b_scale_inv", rank = 3 : i64, strides_bytes = [128, 28672], swizzle = "none"}
// CHECK: nvvm.prefetch tensormap, %arg3
// CHECK-NEXT: nvvm.prefetch tensormap, %arg4
// CHECK: nvvm.tcgen05.alloc %{{.*}}, %c512_i32 : !llvm.ptr<3>, i32
// Producer: A/B tiles plus one A atom and two B atoms per 128-K stage.
// CHECK: } else {
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[FULL:.*]], %c50688_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg{{[01]}}, %[[FULL]], box[%{{.*}}, %{{.*}}] :
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg3, %[[FULL]], box[%{{.*}}, %{{.*}}, %{{.*}}] :
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg4, %[[FULL]], box[%{{.*}}, %{{.*}}, %{{.*}}] :
// MMA thread: three tcgen05.cp (1 A + 2 B atoms), four block-scaled MMAs
// with sf_id 0..3 (0x08C00000, 0x28C00010, 0x48C00020, 0x68C00030).
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-COUNT-3: nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
// CHECK: nvvm.tcgen05.mma.block_scale %[[D:.*]], %{{.*}}, %{{.*}}, %c146800640_i32, %{{.*}}, %[[SFA:.*]], %[[SFB:.*]] {blockScale = #nvvm.tcgen05_mma_block_scale<block32>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.block_scale_kind<mxf8f6f4>}
// CHECK: nvvm.tcgen05.mma.block_scale %[[D]], %{{.*}}, %{{.*}}, %c683671568_i32, %true, %[[SFA]], %[[SFB]]
// CHECK: nvvm.tcgen05.mma.block_scale %[[D]], %{{.*}}, %{{.*}}, %c1220542496_i32, %true, %[[SFA]], %[[SFB]]
// CHECK: nvvm.tcgen05.mma.block_scale %[[D]], %{{.*}}, %{{.*}}, %c1757413424_i32, %true, %[[SFA]], %[[SFB]]
// CHECK-NOT: tcgen05.mma
// CHECK: nvvm.tcgen05.commit
// No CUDA-core promotion: the epilogue reads the accumulator and stores.
// CHECK-NOT: wgmma
func.func @blockwise_e8m0(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2048x7168xf8E4M3FN>, %sa: tensor<?x56xf8E8M0FNU>, %sb: tensor<16x56xf8E8M0FNU>) -> tensor<?x2048xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x7168xf8E4M3FN>, tensor<2048x7168xf8E4M3FN>, tensor<?x56xf8E8M0FNU>, tensor<16x56xf8E8M0FNU>) -> tensor<?x2048xbf16>
  return %0 : tensor<?x2048xbf16>
}

// -----

// f32 scales under #fp8.blockwise<scales = pow2>: the host converts them
// (exactly, they are powers of two); the kernel takes the same UE8M0 atoms.
// f32 output, tile N 128, K 4096 (32 K groups).
// CHECK: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_f32_n1024_k4096_t128x128x128_s{{[0-9]+}}_mx(
// CHECK-SAME: a_granularity = "tile 1x128"
// CHECK-SAME: scale_layout = "mx_atom_128x4_ue8m0"
// CHECK-SAME: {dtype = "ue8m0", name = "a_scale_inv", role = "input", shape = ["M_ATOMS", 32, 512]}
// CHECK-SAME: {dtype = "ue8m0", name = "b_scale_inv", role = "input", shape = [8, 32, 512]}
// CHECK-COUNT-2: nvvm.tcgen05.cp
// CHECK-NOT: nvvm.tcgen05.cp
// CHECK: nvvm.tcgen05.mma.block_scale
func.func @blockwise_f32_pow2(%a: tensor<?x4096xf8E4M3FN>, %b: tensor<1024x4096xf8E4M3FN>, %sa: tensor<?x32xf32>, %sb: tensor<8x32xf32>) -> tensor<?x1024xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<scales = pow2>, config = #fp8.gemm_config<tile = 128x128x128, stages = 4>} : (tensor<?x4096xf8E4M3FN>, tensor<1024x4096xf8E4M3FN>, tensor<?x32xf32>, tensor<8x32xf32>) -> tensor<?x1024xf32>
  return %0 : tensor<?x1024xf32>
}

// -----

// Blockwise 1D x 1D (1x128 scales on A and B: the wgrad GEMM), f32 power-of-
// two scales, f32 output accumulating into C: B's 1x128 scales are converted
// like A's (one UE8M0 per row and 128-K group, in B's atoms of 128 N rows),
// and the kernel is the same block-scaled one. The sm_90a column-pair
// alignment does not apply to the atoms.
// CHECK: gpu.func @fp8_gemm_blockwise_1d1d_e4m3_e4m3_f32_n2112_k4096_t128x128x128_s{{[0-9]+}}_acc_mx(
// CHECK-SAME: a_granularity = "tile 1x128"
// CHECK-SAME: b_granularity = "tile 1x128"
// CHECK-SAME: scale_layout = "mx_atom_128x4_ue8m0"
// CHECK-SAME: {dtype = "ue8m0", name = "a_scale_inv", role = "input", shape = ["M_ATOMS", 32, 512]}
// CHECK-SAME: {dtype = "ue8m0", name = "b_scale_inv", role = "input", shape = [17, 32, 512]}
// CHECK-COUNT-2: nvvm.tcgen05.cp
// CHECK-NOT: nvvm.tcgen05.cp
// CHECK: nvvm.tcgen05.mma.block_scale
// CHECK-NOT: wgmma
func.func @blockwise_1d1d_f32_pow2(%a: tensor<?x4096xf8E4M3FN>, %b: tensor<2112x4096xf8E4M3FN>, %sa: tensor<?x32xf32>, %sb: tensor<2112x32xf32>, %c: tensor<?x2112xf32>) -> tensor<?x2112xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<scales = pow2>, config = #fp8.gemm_config<tile = 128x128x128, stages = 4>} : (tensor<?x4096xf8E4M3FN>, tensor<2112x4096xf8E4M3FN>, tensor<?x32xf32>, tensor<2112x32xf32>, tensor<?x2112xf32>) -> tensor<?x2112xf32>
  return %0 : tensor<?x2112xf32>
}

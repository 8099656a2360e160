// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul | FileCheck %s

// `promotion_parts = 1`: each K block's MMAs over the whole 128-wide 1D x
// 1D tile as one commit group (A's rows read once per block), then all 64
// elements of a consumer thread promoted after wait_group 0. The kernel
// name says the parts.
// CHECK-LABEL: gpu.func @fp8_gemm_blockwise_1d1d_e4m3_e4m3_bf16_n2112_k7168_t128x128x128_s5_p1(
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-64: llvm.intr.fma
// CHECK-NOT: llvm.intr.fma
// CHECK: scf.yield
func.func @one_part(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<2112x56xf32>) -> tensor<?x2112xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 5, promotion_parts = 1>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<2112x56xf32>) -> tensor<?x2112xbf16>
  return %0 : tensor<?x2112xbf16>
}

// -----

// `promotion_parts = 2` is the heuristic's split (96 + 32 at tile N 128).
// CHECK-LABEL: gpu.func @fp8_gemm_blockwise_1d1d_e4m3_e4m3_bf16_n2112_k7168_t128x128x128_s5_p2(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 96, k = 32>, D[<f32>, <zero>]
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 32, k = 32>, D[<f32>, <zero>]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @two_parts(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<2112x56xf32>) -> tensor<?x2112xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 5, promotion_parts = 2>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<2112x56xf32>) -> tensor<?x2112xbf16>
  return %0 : tensor<?x2112xbf16>
}

// -----

// The 256-row tile in one part (DeepGEMM's schedule): per K block each of a
// consumer's two 64-row waves is one commit group of four m64n128k32 MMAs,
// drained by wait_group 0 and promoted (64 FMAs) before the next wave's MMAs
// reuse the partial sums; the stage is freed after the last wave's wait.
// The K loop runs two such blocks a trip.
// CHECK-LABEL: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t256x128x128_s3_c1x2_p1(
// CHECK: scf.for {{.*}} step %c2_i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-64: llvm.intr.fma
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-64: llvm.intr.fma
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: <m = 64, n = 128, k = 32>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-64: llvm.intr.fma
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: <m = 64, n = 128, k = 32>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-64: llvm.intr.fma
// CHECK-NOT: llvm.intr.fma
// CHECK: scf.yield
func.func @wave_tile_one_part(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<4096x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<32x56xf32>) -> tensor<?x4096xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 256x128x128, stages = 3, cluster = 1x2, promotion_parts = 1>} : (tensor<?x7168xf8E4M3FN>, tensor<4096x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<32x56xf32>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

// -----

// The heuristic's 1D x 1D 128x128 tile is one part (bf16 out; the whole
// tile's MMAs one group); accumulating into C it keeps 96 + 32; a 128x128
// B-scale GEMM's 128x128 launch variant keeps two parts too.
// CHECK-LABEL: gpu.func @fp8_gemm_blockwise_1d1d_e4m3_e4m3_bf16_n2112_k7168_t128x128x128_s5_p1(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @default_one_part(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<2112x56xf32>) -> tensor<?x2112xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<2112x56xf32>) -> tensor<?x2112xbf16>
  return %0 : tensor<?x2112xbf16>
}

// -----

// CHECK-LABEL: gpu.func @fp8_gemm_blockwise_1d1d_e4m3_e4m3_f32_n2112_k7168_t128x128x128_s{{[0-9]+}}_acc(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 96, k = 32>, D[<f32>, <zero>]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
func.func @accumulate_two_parts(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<2112x56xf32>, %c: tensor<?x2112xf32>) -> tensor<?x2112xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<2112x56xf32>, tensor<?x2112xf32>) -> tensor<?x2112xf32>
  return %0 : tensor<?x2112xf32>
}

// -----

// CHECK-LABEL: func.func @block_b_scales_two_parts
// CHECK: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_bf16_n2112_k7168_t128x128x128_s5(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 96, k = 32>, D[<f32>, <zero>]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
func.func @block_b_scales_two_parts(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<17x56xf32>) -> tensor<?x2112xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<17x56xf32>) -> tensor<?x2112xbf16>
  return %0 : tensor<?x2112xbf16>
}

// -----

// 128x256 in column waves (the heuristic's tile for a 1x128-block FP8
// result where N is a multiple of 256): per K block each consumer issues the
// tile's two 128-column halves in turn through one partial accumulator: a
// commit group of four m64n128k32 MMAs, drained by wait_group 0 and
// promoted (64 FMAs) before the second half's MMAs reuse the partial sums;
// the stage is freed after the second half's wait. 56 K blocks: two a trip.
// CHECK-LABEL: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_e4m3_n4096_k7168_t128x256x128_s4_q1x128(
// CHECK: nvvm.setmaxregister decrease 24
// CHECK: nvvm.setmaxregister increase 240
// CHECK: scf.for {{.*}} step %c2_i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.mbarrier.arrive
// CHECK-COUNT-64: llvm.intr.fma
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-64: llvm.intr.fma
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: <m = 64, n = 128, k = 32>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-64: llvm.intr.fma
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: <m = 64, n = 128, k = 32>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-64: llvm.intr.fma
// CHECK-NOT: llvm.intr.fma
// CHECK: scf.yield
func.func @column_waves(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<4096x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<32x56xf32>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>) {
  %0, %1 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<?x7168xf8E4M3FN>, tensor<4096x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<32x56xf32>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>)
  return %0, %1 : tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>
}

// -----

// A 64-row promoted tile runs its K blocks in pairs: each block's MMAs over
// the whole 64-column tile into one of two partial accumulators, the second
// block's stage waited for and its MMAs issued before the first block is
// drained (wait_group 1), its stage freed and promoted (32 FMAs); then the
// second (wait_group 0). 9 K blocks: four pairs, then the last block alone.
// CHECK-LABEL: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_bf16_n4096_k1104_t64x64x128_s13(
// CHECK: nvvm.setmaxregister increase
// CHECK: scf.for {{.*}} step %c2_i32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-32: llvm.intr.fma
// CHECK-NOT: llvm.intr.fma
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-32: llvm.intr.fma
// CHECK-NOT: llvm.intr.fma
// CHECK: scf.yield
// CHECK: scf.for {{.*}} step %c1_i32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-4: <m = 64, n = 64, k = 32>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-32: llvm.intr.fma
// CHECK-NOT: llvm.intr.fma
// CHECK: scf.yield
func.func @block_pairs(%a: tensor<?x1104xf8E4M3FN>, %b: tensor<4096x1104xf8E4M3FN>, %sa: tensor<?x9xf32>, %sb: tensor<32x9xf32>) -> tensor<?x4096xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 64x64x128, stages = 13>} : (tensor<?x1104xf8E4M3FN>, tensor<4096x1104xf8E4M3FN>, tensor<?x9xf32>, tensor<32x9xf32>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

// -----

// A grouped GEMM's 64-row tile runs its K blocks in pairs too (m_masked
// blockwise, 5 K blocks: two pairs, then the last block alone); a tile
// outside every group has an empty K loop and runs no trip. With its blocks
// in pairs the tile's throughput is the fast 64x64 tile's.
// CHECK-LABEL: gpu.func @fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n256_k640_t64x64x128_s13_g2(
// CHECK-SAME: throughput = 57
// CHECK: scf.for {{.*}} step %c2_i32
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.yield
// CHECK: scf.for {{.*}} step %c1_i32
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.yield
func.func @grouped_block_pairs(%a: tensor<2x?x640xf8E4M3FN>, %b: tensor<2x256x640xf8E4M3FN>, %sa: tensor<2x?x5xf32>, %sb: tensor<2x2x5xf32>, %c: tensor<2xi32>) -> tensor<2x?x256xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %c {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 64x64x128, stages = 13>} : (tensor<2x?x640xf8E4M3FN>, tensor<2x256x640xf8E4M3FN>, tensor<2x?x5xf32>, tensor<2x2x5xf32>, tensor<2xi32>) -> tensor<2x?x256xbf16>
  return %d : tensor<2x?x256xbf16>
}

// -----

// With per-tensor scales the one-wave 128-row tiles up to 128 columns run
// their K blocks in pairs as the 64-row tiles do: per consumer one
// m64n128k32 wgmma a K step into one of two partial accumulators, the
// second block's MMAs issued before the first block is drained, freed and
// promoted (64 additions a thread), then the second. 11 K blocks: five
// pairs, then the last block alone.
// CHECK-LABEL: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n4096_k1408_t128x128x128_s6(
// CHECK: scf.for {{.*}} step %c2_i32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-64: arith.addf
// CHECK-NOT: arith.addf
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-64: arith.addf
// CHECK-NOT: arith.addf
// CHECK: scf.yield
// CHECK: scf.for {{.*}} step %c1_i32
// CHECK-COUNT-4: <m = 64, n = 128, k = 32>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-64: arith.addf
// CHECK: scf.yield
func.func @tensorwise_block_pairs(%a: tensor<?x1408xf8E4M3FN>, %b: tensor<4096x1408xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>) -> tensor<?x4096xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 6>} : (tensor<?x1408xf8E4M3FN>, tensor<4096x1408xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

// -----

// The blockwise 128x128 tile (its columns one 128x128 B block) runs its K
// blocks in pairs as the per-tensor one does, but waits for both stages
// and reads both blocks' scales (two row scales and the block's B scale
// each) before the first block's MMAs: a shared-memory load issued behind
// the warpgroup's own MMAs would return only once they have read their
// operands. Then per consumer one m64n128k32 wgmma a K step into each of
// the two partial accumulators, the first block drained, freed and
// promoted (64 FMAs a thread) under the second's MMAs, then the second.
// 56 K blocks: 28 pairs, none left for the single-block loop after.
// CHECK-LABEL: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t128x128x128_s5(
// CHECK: scf.for {{.*}} step %c2_i32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-3: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: nvvm.wgmma
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-3: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.load
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: llvm.load
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-64: llvm.intr.fma
// CHECK-NOT: llvm.intr.fma
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-64: llvm.intr.fma
// CHECK-NOT: llvm.intr.fma
// CHECK: scf.yield
// CHECK: scf.for {{.*}} step %c1_i32
func.func @paired_trip(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<4096x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<32x56xf32>) -> tensor<?x4096xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 5>} : (tensor<?x7168xf8E4M3FN>, tensor<4096x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<32x56xf32>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

// -----

// The 160-column tile (parts of 128 + 32 columns) runs two K blocks a trip
// too, each waiting on its own full barrier; the 192-column one runs one.
// CHECK-LABEL: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_bf16_n10240_k8192_t128x160x128_s5(
// CHECK: scf.for {{.*}} step %c2_i32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 32, k = 32>, D[<f32>, <zero>]
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 32, k = 32>, D[<f32>, <zero>]
// CHECK: scf.yield
// CHECK: scf.for {{.*}} step %c1_i32
func.func @paired_trip_160(%a: tensor<?x8192xf8E4M3FN>, %b: tensor<10240x8192xf8E4M3FN>, %sa: tensor<?x64xf32>, %sb: tensor<80x64xf32>) -> tensor<?x10240xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x160x128, stages = 5>} : (tensor<?x8192xf8E4M3FN>, tensor<10240x8192xf8E4M3FN>, tensor<?x64xf32>, tensor<80x64xf32>) -> tensor<?x10240xbf16>
  return %0 : tensor<?x10240xbf16>
}

// -----

// CHECK-LABEL: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_bf16_n10240_k8192_t128x192x128_s4(
// CHECK-NOT: step %c2_i32
// CHECK: gpu.return
func.func @single_trip_192(%a: tensor<?x8192xf8E4M3FN>, %b: tensor<10240x8192xf8E4M3FN>, %sa: tensor<?x64xf32>, %sb: tensor<80x64xf32>) -> tensor<?x10240xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x192x128, stages = 4>} : (tensor<?x8192xf8E4M3FN>, tensor<10240x8192xf8E4M3FN>, tensor<?x64xf32>, tensor<80x64xf32>) -> tensor<?x10240xbf16>
  return %0 : tensor<?x10240xbf16>
}

// -----

// A tile of 64 columns is one promotion part: each K block's four
// m64n64k32 wgmmas one commit group, promoted after wait_group 0 (in two
// 32-column parts, twice the wgmmas, each reading the A rows, ran
// 0.86-0.95x); two blocks a trip.
// CHECK-LABEL: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_bf16_n2112_k7168_t128x64x128_s8(
// CHECK: scf.for {{.*}} step %c2_i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 32>, D[<f32>, <one>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-32: llvm.intr.fma
// CHECK-NOT: n = 32, k = 32
// CHECK: gpu.return
func.func @one_part_64(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<17x56xf32>) -> tensor<?x2112xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x64x128, stages = 8>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<17x56xf32>) -> tensor<?x2112xbf16>
  return %0 : tensor<?x2112xbf16>
}

// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul | FileCheck %s

// Per-tensor scales, fast accumulation: the heuristic picks 128x256x128 for
// N = 7168 (a multiple of 256); staging the output in two of its four
// 128-byte store boxes (32 KiB instead of 64) leaves room for 4 stages.
// CHECK-LABEL: module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">, gpu.container_module}
// On tensors the op becomes a launch in destination-passing style: D is a
// new tensor (M from A), the last launcher argument.
// CHECK: func.func private @[[K:fp8_gemm_tensorwise_e4m3_e4m3_bf16_n7168_k2048_t128x256x128_s4_fast]]_launch_into({{.*}}, memref<?x7168xbf16> {bufferization.access = "write"}) attributes {fp8.kernel = @fp8_kernels::@[[K]]}
// CHECK: func.func @tensorwise
// CHECK: %[[M:.*]] = tensor.dim %arg0, %c0 : tensor<?x2048xf8E4M3FN>
// CHECK: %[[D:.*]] = tensor.empty(%[[M]]) : tensor<?x7168xbf16>
// CHECK: fp8.launch @[[K]]_launch_into(%arg0, %arg1, %arg2, %arg3, %[[D]]) outputs [4]
// CHECK: gpu.module @fp8_kernels
// CHECK: llvm.mlir.global external @__dynamic_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// The tensor maps of A, B and D are parameters 0 to 2.
// CHECK: gpu.func @[[K]](%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32) kernel
// CHECK-SAME: fp8.grid_constant_args = array<i32: 0, 1, 2>
// CHECK-SAME: dynamic_shared_memory_bytes = 229440
// CHECK-SAME: tensor_maps = [{box = [128, 128], dims = [2048, "M"]
// CHECK-SAME: {box = [128, 256], dims = [2048, 7168]
// CHECK-SAME: {box = [64, 128], dims = [7168, "M"], dtype = "bf16", {{.*}} name = "tma_d", oob_fill = "zero", operand = "d", rank = 2 : i64, strides_bytes = [14336], swizzle = "128B"}
// CHECK-SAME: nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32
// Barriers: full (1 producer arrival) and empty (256 consumer threads).
// CHECK: nvvm.mbarrier.init %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.prefetch tensormap
// CHECK: gpu.barrier
// Producer warpgroup: gives registers away; one thread of its first warp,
// chosen by elect.sync, issues TMA.
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: %[[WARP0:.*]] = arith.cmpi ult, %{{.*}}, %c32_i32 : i32
// CHECK-NEXT: scf.if %[[WARP0]] {
// CHECK-NEXT: %[[ELECTED:.*]] = nvvm.elect.sync -> i1
// CHECK-NEXT: scf.if %[[ELECTED]] {
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} box[
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} box[
// Consumer warpgroups.
// CHECK: } else {
// CHECK: nvvm.setmaxregister increase 232
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 256, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// One MMA group stays in flight; the previous block's stage is released.
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// Epilogue, once per box, the boxes taking the two slots in turn: wait
// until at most one store (the other slot's) still reads the buffer, write
// the box's swizzled columns, fence, then one thread stores the box with TMA.
// CHECK: nvvm.cp.async.bulk.wait_group 1 {read}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: arith.xori
// CHECK: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 1 {read}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: arith.xori
// CHECK: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 1 {read}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: arith.xori
// CHECK: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 1 {read}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: arith.xori
// CHECK: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.wait_group 0
func.func @tensorwise(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<7168x2048xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>) -> tensor<?x7168xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x2048xf8E4M3FN>, tensor<7168x2048xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x7168xbf16>
  return %0 : tensor<?x7168xbf16>
}

// -----

// Blockwise scales, tile N 128 (by override), the first wgmma of each 128-K block restarts
// the partial sum (scale-d = 0), which is then promoted into the f32
// accumulator with FMAs by sA[row, kblk] * sB[nblk, kblk]. The scales travel
// with the stages: the TMA thread copies the K block's A scales of the tile
// (128 rows, fewer where the tensor's roundup(M, 4) rows end) into the
// stage's scale slot with one bulk copy counted in the stage's transaction
// bytes (hence a_scale_inv's 16-byte alignment), and the tile's B scale with
// a 4-byte cp.async that counts as the second of the full barrier's 2
// arrivals. The tile's columns are one B block, so its K blocks go in
// pairs: the consumers wait for both stages and read both blocks' scales
// from shared memory before issuing the first block's MMAs (no global
// loads in the mainloop), each block one commit group into its own partial
// accumulator; the first block is promoted after wait_group 1 while the
// second block's MMAs still run. The wgmma descriptors take the warpgroup
// index read from lane 0 (uniform). Every consumer thread frees a stage:
// each one's release covers its own reads of the scale slot (256
// arrivals).
// CHECK-LABEL: func.func @blockwise
// CHECK: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_bf16_n2112_k7168_t128x128x128_s5_bias
// CHECK-SAME: a_granularity = "tile 1x128"
// CHECK-SAME: {alignment = 16 : i64, dtype = "f32", name = "a_scale_inv", role = "input", shape = [56, "roundup(M, 4)"]}
// CHECK-SAME: {dtype = "f32", name = "b_scale_inv", role = "input", shape = [17, 56]}
// CHECK: nvvm.mbarrier.init %{{.*}}, %c2_i32
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: %[[ROWS:.*]] = arith.minui %c128_i32{{.*}}, %{{.*}} : i32
// CHECK: %[[ABYTES:.*]] = arith.muli %[[ROWS]], %c4_i32
// CHECK: %[[TX:.*]] = arith.addi %c32768_i32{{.*}}, %[[ABYTES]]
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %[[TX]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %[[ABYTES]]
// CHECK: arith.minui %{{.*}}, %c16_i32
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT: nvvm.cp.async.mbarrier.arrive %{{.*}} {noinc = true} : !llvm.ptr<3>
// CHECK: nvvm.setmaxregister increase 232
// CHECK: nvvm.shfl.sync idx %{{.*}}, %{{.*}}, %c0_i32{{.*}}, %c31_i32
// CHECK: %[[SA0:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: %[[SA1:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: %[[SB:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: %[[S0:.*]] = arith.mulf %[[SA0]], %[[SB]] : f32
// CHECK: %[[S1:.*]] = arith.mulf %[[SA1]], %[[SB]] : f32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: %[[TA0:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: %[[TA1:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: %[[TB:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: %[[T0:.*]] = arith.mulf %[[TA0]], %[[TB]] : f32
// CHECK: %[[T1:.*]] = arith.mulf %[[TA1]], %[[TB]] : f32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: !llvm.ptr<1> -> f32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NOT: scf.if
// CHECK: nvvm.mbarrier.arrive
// CHECK: llvm.intr.fma(%{{.*}}, %[[S0]], %{{.*}}) : (f32, f32, f32) -> f32
// CHECK: llvm.intr.fma(%{{.*}}, %[[S1]], %{{.*}}) : (f32, f32, f32) -> f32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK: llvm.intr.fma(%{{.*}}, %[[T0]], %{{.*}}) : (f32, f32, f32) -> f32
// CHECK: llvm.intr.fma(%{{.*}}, %[[T1]], %{{.*}}) : (f32, f32, f32) -> f32
func.func @blockwise(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<17x56xf32>, %bias: tensor<2112xbf16>) -> tensor<?x2112xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb bias %bias {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 5>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<17x56xf32>, tensor<2112xbf16>) -> tensor<?x2112xbf16>
  return %0 : tensor<?x2112xbf16>
}

// -----

// Blockwise 1D x 1D (1x128 scales on A and B: the wgrad GEMM), f32 output
// accumulating into C. B's scales are MN-major [K/128, N]: the TMA thread
// copies the K block's A scales of the tile and its column scales (at most
// N - nOffset of them: the last tile of N = 2112 is partial) into the
// stage's scale slot with two bulk copies, both counted in the stage's
// transaction bytes (the full barrier expects only the TMA thread's
// arrival); before issuing its MMAs each consumer thread reads its
// two row scales and its 16 column-scale pairs (one 8-byte shared load per
// pair). The promotion scales element 4j + 2h + e by
// sA[row h] * sB[column 8j + 2 (lane % 4) + e]: the first 96 columns' 48
// elements after wait_group 1, the last 32 columns' 16 after wait_group 0.
// CHECK-LABEL: func.func @blockwise_1d1d
// CHECK: gpu.func @fp8_gemm_blockwise_1d1d_e4m3_e4m3_f32_n2112_k7168_t128x128x128_s5_acc
// CHECK-SAME: a_granularity = "tile 1x128"
// CHECK-SAME: accumulate_into_c = true
// CHECK-SAME: b_granularity = "tile 1x128"
// CHECK-SAME: {alignment = 16 : i64, dtype = "f32", name = "a_scale_inv", role = "input", shape = [56, "roundup(M, 4)"]}
// CHECK-SAME: {alignment = 16 : i64, dtype = "f32", name = "b_scale_inv", role = "input", shape = [56, 2112]}
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: %[[COLS:.*]] = arith.subi %c2112_i32, %{{.*}} : i32
// CHECK: arith.minui %c128_i32{{.*}}, %[[COLS]] : i32
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-COUNT-2: nvvm.cp.async.bulk.shared.cluster.global
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: nvvm.setmaxregister increase 232
// CHECK: %[[SA0:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: %[[SA1:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: %[[P0:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> vector<2xf32>
// CHECK: %[[SB0:.*]] = llvm.extractelement %[[P0]][%c0_i32{{.*}} : i32] : vector<2xf32>
// CHECK: %[[SB1:.*]] = llvm.extractelement %[[P0]][%c1_i32{{.*}} : i32] : vector<2xf32>
// CHECK: %[[P1:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> vector<2xf32>
// CHECK: %[[SB2:.*]] = llvm.extractelement %[[P1]][%c0_i32{{.*}} : i32] : vector<2xf32>
// CHECK-COUNT-14: llvm.load %{{.*}} : !llvm.ptr<3> -> vector<2xf32>
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 96, k = 32>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 96, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 32, k = 32>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: llvm.load
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// Elements 0 to 3: rows 0 and 8 of columns 0 and 1; element 4: column 8.
// CHECK: %[[S0:.*]] = arith.mulf %[[SA0]], %[[SB0]] : f32
// CHECK-NEXT: llvm.intr.fma(%{{.*}}, %[[S0]], %{{.*}}) : (f32, f32, f32) -> f32
// CHECK: %[[S1:.*]] = arith.mulf %[[SA0]], %[[SB1]] : f32
// CHECK-NEXT: llvm.intr.fma(%{{.*}}, %[[S1]], %{{.*}})
// CHECK: %[[S2:.*]] = arith.mulf %[[SA1]], %[[SB0]] : f32
// CHECK-NEXT: llvm.intr.fma(%{{.*}}, %[[S2]], %{{.*}})
// CHECK: %[[S3:.*]] = arith.mulf %[[SA1]], %[[SB1]] : f32
// CHECK-NEXT: llvm.intr.fma(%{{.*}}, %[[S3]], %{{.*}})
// CHECK: %[[S4:.*]] = arith.mulf %[[SA0]], %[[SB2]] : f32
// CHECK-NEXT: llvm.intr.fma(%{{.*}}, %[[S4]], %{{.*}})
// CHECK-COUNT-43: llvm.intr.fma
// CHECK-NOT: llvm.intr.fma
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-16: llvm.intr.fma
// CHECK-NOT: llvm.intr.fma
// CHECK: scf.yield
func.func @blockwise_1d1d(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<2112x56xf32>, %c: tensor<?x2112xf32>) -> tensor<?x2112xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<2112x56xf32>, tensor<?x2112xf32>) -> tensor<?x2112xf32>
  return %0 : tensor<?x2112xf32>
}

// -----

// Hybrid-format gradients (e5m2 x e4m3), row scales, f32 accumulate-into-C
// (direct stores: no staging buffer); N = 2112 pads least with tile N 192.
// CHECK-LABEL: func.func @rowwise_wgrad
// CHECK: gpu.func @fp8_gemm_rowwise_e5m2_e4m3_f32_n2112_k4096_t128x192x128_s5_fast_acc
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 192, k = 32>, D[<f32>, <one>], A[<e5m2>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: llvm.load {{.*}} -> vector<2xf32>
// CHECK: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<1>
func.func @rowwise_wgrad(%a: tensor<?x4096xf8E5M2>, %b: tensor<2112x4096xf8E4M3FN>, %sa: tensor<?x1xf32>, %sb: tensor<2112x1xf32>, %c: tensor<?x2112xf32>) -> tensor<?x2112xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>} : (tensor<?x4096xf8E5M2>, tensor<2112x4096xf8E4M3FN>, tensor<?x1xf32>, tensor<2112x1xf32>, tensor<?x2112xf32>) -> tensor<?x2112xf32>
  return %0 : tensor<?x2112xf32>
}

// -----

// The IR overrides the heuristic; two call sites of one GEMM share a kernel.
// CHECK-LABEL: func.func @override
// CHECK-COUNT-2: fp8.launch @fp8_gemm_tensorwise_e4m3_e4m3_f16_n4096_k4096_t64x128x128_s3_launch_into
// CHECK: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_f16_n4096_k4096_t64x128x128_s3
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: nvvm.setmaxregister increase 240
// CHECK-NOT: gpu.func
func.func @override(%a: tensor<?x4096xf8E4M3FN>, %b: tensor<4096x4096xf8E4M3FN>, %s: tensor<f32>) -> (tensor<?x4096xf16>, tensor<?x4096xf16>) {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 64x128x128, stages = 3>} : (tensor<?x4096xf8E4M3FN>, tensor<4096x4096xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x4096xf16>
  %1 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 64x128x128, stages = 3>} : (tensor<?x4096xf8E4M3FN>, tensor<4096x4096xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x4096xf16>
  return %0, %1 : tensor<?x4096xf16>, tensor<?x4096xf16>
}

// -----

// A 2x1 cluster: each CTA loads half of the B tile and multicasts it; the
// stages' empty barriers collect the consumer warps of both CTAs.
// CHECK-LABEL: func.func @cluster
// CHECK: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n7168_k2048_t128x256x128_s3_c2x1_fast
// CHECK-SAME: cluster = [2, 1, 1]
// CHECK-SAME: {box = [128, 128], dims = [2048, 7168]
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK: nvvm.cluster.wait {aligned}
// CHECK: nvvm.read.ptx.sreg.cluster.ctarank
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %{{.*}}
// CHECK: nvvm.mapa %{{.*}}, %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<7>
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: gpu.return
func.func @cluster(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<7168x2048xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x7168xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x256x128, stages = 3, cluster = 2x1>} : (tensor<?x2048xf8E4M3FN>, tensor<7168x2048xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x7168xbf16>
  return %0 : tensor<?x7168xbf16>
}

// -----

// Promoted tiles: the heuristic takes tile N 192 for a run-time M (fewer
// waits and promotions per MMA), tensorwise and blockwise, and 128 for a
// static M = 128, where 56 tiles of 128 columns keep more of the 132 SMs
// busy than 38 of 192.
// CHECK-LABEL: func.func @promoted_tile_n
// CHECK-DAG: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n7168_k2048_t128x192x128_s4(
// CHECK-DAG: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n7168_k2048_t128x128x128_s6(
// CHECK-DAG: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_bf16_n7168_k2048_t128x192x128_s4(
func.func @promoted_tile_n(%a: tensor<?x2048xf8E4M3FN>, %a128: tensor<128x2048xf8E4M3FN>, %b: tensor<7168x2048xf8E4M3FN>, %s: tensor<f32>, %sa: tensor<?x16xf32>, %sb: tensor<56x16xf32>) -> (tensor<?x7168xbf16>, tensor<128x7168xbf16>, tensor<?x7168xbf16>) {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x2048xf8E4M3FN>, tensor<7168x2048xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x7168xbf16>
  %1 = fp8.scaled_matmul %a128, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<128x2048xf8E4M3FN>, tensor<7168x2048xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x7168xbf16>
  %2 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x2048xf8E4M3FN>, tensor<7168x2048xf8E4M3FN>, tensor<?x16xf32>, tensor<56x16xf32>) -> tensor<?x7168xbf16>
  return %0, %1, %2 : tensor<?x7168xbf16>, tensor<128x7168xbf16>, tensor<?x7168xbf16>
}

// -----

// Blockwise tiles 160 wide start at multiples of 32 of a 128x128 B block
// and meet two blocks: column groups 0-3 always use the tile's first block,
// groups 16-19 the second, and groups 4-7, 8-11, 12-15 the first iff the
// tile's offset in its block is below 96, 64, 32. The TMA thread copies
// the B scale of each of these five classes (picking the block by the
// offset), so that the consumers index B scales by class only; beside more
// than three classes it takes 56 registers, the consumers 224. The tile
// meets two blocks: one K loop (hasBBlockCases).
// CHECK-LABEL: func.func @blockwise_tile_160
// CHECK: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_bf16_n2112_k7168_t128x160x128_s4
// CHECK: nvvm.setmaxregister decrease 56
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: %[[OFF:.*]] = arith.remui %{{.*}}, %c128_i32
// CHECK: nvvm.cp.async.shared.global
// CHECK: arith.cmpi ult, %[[OFF]], %c96_i32
// CHECK: arith.select
// CHECK: nvvm.cp.async.shared.global
// CHECK: arith.cmpi ult, %[[OFF]], %c64_i32
// CHECK: nvvm.cp.async.shared.global
// CHECK: arith.cmpi ult, %[[OFF]], %c32_i32
// CHECK: nvvm.cp.async.shared.global
// CHECK-NOT: arith.cmpi ult, %[[OFF]]
// CHECK: nvvm.cp.async.shared.global
// CHECK-NEXT: nvvm.cp.async.mbarrier.arrive
// CHECK: nvvm.setmaxregister increase 224
// CHECK-NOT: scf.index_switch
// CHECK-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK-COUNT-5: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: arith.select
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 32, k = 32>, D[<f32>, <zero>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: arith.select
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NOT: arith.select
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @blockwise_tile_160(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<17x56xf32>) -> tensor<?x2112xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x160x128, stages = 4>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<17x56xf32>) -> tensor<?x2112xbf16>
  return %0 : tensor<?x2112xbf16>
}

// -----

// A 128-row blockwise tile narrower than a B block, 80 columns wide, starts
// at a multiple of 16 of its block: the consumers run the K loop of its
// offset (case i: 16 i columns; the default: 0), in which the five column
// classes read two scales, the first class's and that of the first class
// past the offset (case 4: bound 64, 16 bytes in; case 7: bound 112, 4
// bytes in), or one where the tile lies in one block (offset 0 to 48):
// one or two products a row, not five.
// CHECK-LABEL: func.func @blockwise_tile_80
// CHECK: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_bf16_n10240_k8192_t128x80x128_s7
// CHECK: nvvm.setmaxregister increase 224
// CHECK: %[[INDEX:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK-NEXT: scf.index_switch %[[INDEX]]
// CHECK-NEXT: case 1 {
// CHECK: llvm.getelementptr %{{.*}}[%c512_i64]
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: llvm.getelementptr %{{.*}}[%c0_i64]
// CHECK-NEXT: llvm.load
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK: case 4 {
// CHECK: llvm.getelementptr %{{.*}}[%c0_i64]
// CHECK-NEXT: llvm.load
// CHECK-COUNT-2: arith.mulf
// CHECK-NEXT: arith.constant 16 : i64
// CHECK-NEXT: llvm.getelementptr %{{.*}}[%c16_i64]
// CHECK-NEXT: llvm.load
// CHECK-COUNT-2: arith.mulf
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK: case 7 {
// CHECK: llvm.getelementptr %{{.*}}[%c4_i64]
// CHECK-NEXT: llvm.load
// CHECK-COUNT-2: arith.mulf
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK: default {
// CHECK: llvm.getelementptr %{{.*}}[%c0_i64]
// CHECK-NEXT: llvm.load
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: nvvm.wgmma.fence.aligned
func.func @blockwise_tile_80(%a: tensor<?x8192xf8E4M3FN>, %b: tensor<10240x8192xf8E4M3FN>, %sa: tensor<?x64xf32>, %sb: tensor<80x64xf32>) -> tensor<?x10240xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x80x128, stages = 7>} : (tensor<?x8192xf8E4M3FN>, tensor<10240x8192xf8E4M3FN>, tensor<?x64xf32>, tensor<80x64xf32>) -> tensor<?x10240xbf16>
  return %0 : tensor<?x10240xbf16>
}

// -----

// Stream-K (asked for in the config). The last partial
// wave's tiles are split along K over the CTAs: thread 0 writes the
// schedule to shared memory (6 words after the barriers), the whole units
// come first (scf.for), then this CTA's stream-K segments (scf.while). A CTA
// that starts inside a tile stores its partial sums (16-byte chunks) in its
// workspace slot, then one thread fences and raises the CTA's flag; the CTA
// with the tile's first K block waits for each later CTA's flag (acquire),
// clears it and adds the sums before the epilogue. The workspace is a
// parameter the runtime allocates: 128 bytes of flag + a 128x192 f32 tile
// per CTA.
// CHECK-LABEL: func.func @stream_k
// CHECK: gpu.func @[[SK:fp8_gemm_tensorwise_e4m3_e4m3_bf16_n4096_k7168_t128x192x128_s4_sk]](%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %[[WS:.*]]: !llvm.ptr<1>) kernel
// CHECK-SAME: stream_k = true
// CHECK-SAME: {kind = "i32", name = "m", value = "M"}, {bytes_per_cta = 98432 : i64, kind = "workspace", name = "workspace"}
// CHECK: arith.remui
// CHECK: llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK: nvvm.setmaxregister increase 232
// CHECK: scf.for
// CHECK: scf.while
// CHECK: nvvm.wgmma.mma_async
// CHECK: llvm.store %{{.*}}, %{{.*}} : vector<4xf32>, !llvm.ptr<1>
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: %[[FLAG:.*]] = llvm.getelementptr %[[WS]]
// CHECK: llvm.store %c1_i32{{.*}}, %[[FLAG]] atomic syncscope("device") monotonic
// CHECK: scf.while
// CHECK: llvm.load %{{.*}} atomic syncscope("device") acquire {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: llvm.store %c0_i32{{.*}}, %{{.*}} atomic syncscope("device") monotonic
// CHECK: nvvm.barrier id
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: arith.addf
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
func.func @stream_k(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<4096x7168xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x4096xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x192x128, stages = 4, stream_k = true>} : (tensor<?x7168xf8E4M3FN>, tensor<4096x7168xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

// -----

// The default (and `stream_k = false`): whole tiles only, no workspace.
// CHECK-LABEL: func.func @no_stream_k
// CHECK: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n4096_k7168_t128x192x128_s4(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32) kernel
// CHECK-NOT: workspace
// CHECK-NOT: scf.while
// CHECK: gpu.return
func.func @no_stream_k(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<4096x7168xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x4096xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x192x128, stream_k = false>} : (tensor<?x7168xf8E4M3FN>, tensor<4096x7168xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

// -----

// The 256x128 tile with a 1x2 cluster: two consumer warpgroups of two
// 64-row waves each (384 threads), the CTA pair sharing the A tile (each
// loads 128 of its rows and multicasts them; B is not multicast), the output
// staged for boxes of all 256 rows. A K block's MMAs run as groups (wave,
// part) of 64 + 64 columns; the second wave's (A rows 128 further on: 1024
// in the descriptor's 16-byte units) reuse the partial accumulators, each
// issued once the first wave's same part is promoted, and the stage is
// freed (in both CTAs) after the last group.
// CHECK-LABEL: func.func @wave_tile
// CHECK: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_bf16_n7168_k2048_t256x128x128_s3_c1x2(
// CHECK-SAME: block = [384, 1, 1]
// CHECK-SAME: cluster = [2, 1, 1]
// CHECK-SAME: {box = [64, 256], dims = [7168, "M"], dtype = "bf16"
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0, %{{.*}}, box[%{{.*}}, %{{.*}}] multicast_mask = %c3_i16
// CHECK-NEXT: llvm.addrspacecast
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg1, %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: scf.for {{.*}} step %c2_i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: <m = 64, n = 64, k = 32>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-COUNT-4: <m = 64, n = 64, k = 32>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NEXT: %c1024_i32 = arith.constant 1024 : i32
// CHECK-COUNT-4: <m = 64, n = 64, k = 32>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: <m = 64, n = 64, k = 32>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<7>
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<7>
// The K loop runs two blocks a trip: the second block's stage and parity
// follow the first's by selects (no division by the stage count), then
// come its 16 MMAs and its release; the blocks past the whole trips run
// one at a time in a second loop.
// CHECK: arith.select
// CHECK: arith.select
// CHECK-COUNT-16: <m = 64, n = 64, k = 32>
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<7>
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<7>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: scf.for {{.*}} step %[[ONE]]
// CHECK-COUNT-16: <m = 64, n = 64, k = 32>
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<7>
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<7>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.cluster.arrive {aligned}
func.func @wave_tile(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<7168x2048xf8E4M3FN>, %sa: tensor<?x16xf32>, %sb: tensor<56x16xf32>) -> tensor<?x7168xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 256x128x128, stages = 3, cluster = 1x2>} : (tensor<?x2048xf8E4M3FN>, tensor<7168x2048xf8E4M3FN>, tensor<?x16xf32>, tensor<56x16xf32>) -> tensor<?x7168xbf16>
  return %0 : tensor<?x7168xbf16>
}

// -----

// Blockwise in a 2x1 cluster: with an odd number of M tiles the second CTA
// of the last pair holds a tile past M; its A scale rows left clamp to zero
// (roundup(M, 4) - min(row, roundup(M, 4))) and it copies none.
// CHECK-LABEL: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_bf16_n256_k512_t128x128x128_s4_c2x1
// CHECK: %[[ROWS:.*]] = arith.muli %{{.*}}, %c4_i32{{.*}} : i32
// CHECK: %[[FIRST:.*]] = arith.minui %[[ROW:.*]], %[[ROWS]] : i32
// CHECK: %[[LEFT:.*]] = arith.subi %[[ROWS]], %[[FIRST]] : i32
// CHECK: %[[TILE:.*]] = arith.minui %c128_i32{{.*}}, %[[LEFT]] : i32
// CHECK: %[[BYTES:.*]] = arith.muli %[[TILE]], %c4_i32{{.*}} : i32
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: %[[ANY:.*]] = arith.cmpi ult, %c0_i32{{.*}}, %[[BYTES]] : i32
// CHECK-NEXT: scf.if %[[ANY]] {
// CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %[[BYTES]]
func.func @blockwise_cluster(%a: tensor<?x512xf8E4M3FN>, %b: tensor<256x512xf8E4M3FN>, %sa: tensor<?x4xf32>, %sb: tensor<2x4xf32>) -> tensor<?x256xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 4, cluster = 2x1>} : (tensor<?x512xf8E4M3FN>, tensor<256x512xf8E4M3FN>, tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// -----

// Ping-pong (asked for in the config; the heuristic's form of the fast
// 128x128 tile): each consumer warpgroup computes whole 128x128 tiles in
// two 64-row waves (two m64n128k32 groups per K block, two groups kept in
// flight) and the consumers take the CTA's tiles in turn. Consumer 1 gives
// consumer 0 the first turn (bar.arrive on barrier 4); each consumer's tile
// loop waits for its turn (bar.sync on 4 + consumer, both warpgroups), gives
// it to the other once its last MMAs are issued (before wait_group 0), and
// then stages its tile behind its own 128-thread barrier; the consumer
// whose turn follows the CTA's last tile takes it after the loop. A stage
// is freed by the 4 warps of one consumer.
// CHECK-LABEL: func.func @ping_pong
// CHECK: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n4096_k7168_t128x128x128_s5_pp_fast(
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK: nvvm.setmaxregister increase 232
// CHECK: nvvm.barrier.arrive id = %c4_i32{{.*}} number_of_threads = %c256_i32
// CHECK: scf.for
// CHECK: nvvm.barrier id = %[[TURN:.*]] number_of_threads = %c256_i32
// CHECK: scf.for
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 2
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.barrier id = %[[STAGING:.*]] number_of_threads = %c128_i32
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.barrier id = %[[TURN]] number_of_threads = %c256_i32
func.func @ping_pong(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<4096x7168xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x4096xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x128x128, stages = 5, ping_pong = true>} : (tensor<?x7168xf8E4M3FN>, tensor<4096x7168xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

// -----

// Fast accumulation in a 256x128 tile (two consumers of two 64-row waves,
// cuBLASLt's shape): each wave's MMAs are a commit group, both kept in
// flight; with 4 stages the output is staged one 128-byte box at a time.
// CHECK-LABEL: func.func @fast_wave_tile
// CHECK: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n4096_k7168_t256x128x128_s4_c1x2_fast(
// CHECK: scf.for
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 2
func.func @fast_wave_tile(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<4096x7168xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x4096xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 256x128x128, stages = 4, cluster = 1x2>} : (tensor<?x7168xf8E4M3FN>, tensor<4096x7168xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

// RUN: fp8-opt %s -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul | FileCheck %s

// A decode GEMM (run-time M) whose 16x64 swap-AB tiles are few (N = 2112:
// 33 tiles) also gets the swap-AB tile split along K over clusters of 2 and
// 4 CTAs (33 x 4 <= 132 SMs; K = 7168 is 56 blocks, 14 per CTA of 4). Rank
// r of a cluster computes K blocks [56 r / 4, 56 (r + 1) / 4) of the
// cluster's tile; the ranks past 0 store their f32 sums (two 16-byte chunks
// per thread) into rank 0's shared memory through the cluster window and
// arrive on rank 0's barrier with release semantics at cluster scope; rank
// 0 waits for them (acquire at cluster scope), adds them in rank order,
// frees each rank's slot with an arrival on that rank's barrier and runs the
// epilogue. No stream-K schedule and no workspace; the grid runs k_split =
// 4 CTAs per tile, a [4, 1, 1] cluster, synchronized after the barriers'
// initialization and before exit. Like every swap-AB kernel it is
// launched with programmatic stream serialization.
// CHECK-LABEL: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n2112_k7168_t16x64x128_s16_swapab_ks2_fast(
// CHECK-SAME: cluster = [2, 1, 1]
// CHECK-SAME: grid = {k_split = 2 : i64, kind = "persistent"
// CHECK-LABEL: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n2112_k7168_t16x64x128_s16_swapab_ks4_fast(
// CHECK-SAME: %{{.*}}: i32) kernel
// CHECK-SAME: cluster = [4, 1, 1]
// CHECK-NOT: workspace
// CHECK-SAME: grid = {k_split = 4 : i64, kind = "persistent", throughput = 16 : i64, tile_m = 16 : i64, tile_n = 64 : i64}
// CHECK-SAME: programmatic_launch = true
// CHECK-SAME: nvvm.cluster_dim = array<i32: 4, 1, 1>
// The two split-K barriers: 3 x 128 arrivals (the other ranks' consumer
// threads) and 128 (rank 0's).
// CHECK: nvvm.mbarrier.init %[[STORED:.*]], %c384_i32
// CHECK: %[[READ:.*]] = llvm.getelementptr %[[STORED]][%c8_i64{{.*}}]
// CHECK: nvvm.mbarrier.init %[[READ]], %c128_i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank
// Nothing before this reads or writes global memory: the prologue
// overlaps the end of the grid before (programmatic launch).
// CHECK: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// The producer's K range: rank * 56 / 4 to (rank + 1) * 56 / 4.
// CHECK: arith.muli %[[RANK]], %c56_i32
// CHECK: arith.divui %{{.*}}, %c4_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// The consumers' reduction.
// CHECK: nvvm.wgmma.mma_async
// CHECK: scf.while
// CHECK: nvvm.mbarrier.try_wait %{{.*}}, %{{.*}}, %{{.*}} {scope = #nvvm.mem_scope<cluster>}
// CHECK: %[[FIRST:.*]] = nvvm.mapa %{{.*}}, %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: llvm.store %{{.*}}, %{{.*}} : vector<4xf32>, !llvm.ptr<7>
// CHECK: llvm.store %{{.*}}, %{{.*}} : vector<4xf32>, !llvm.ptr<7>
// CHECK: %[[REMOTE:.*]] = nvvm.mapa %[[STORED]], %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[REMOTE]] {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: nvvm.mbarrier.try_wait %{{.*}}, %{{.*}}, %{{.*}} {scope = #nvvm.mem_scope<cluster>}
// CHECK-COUNT-24: arith.addf
// CHECK: nvvm.mapa %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %{{.*}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: nvvm.mapa %{{.*}}, %c2_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %{{.*}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: nvvm.mapa %{{.*}}, %c3_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %{{.*}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: gpu.return
func.func @decode(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x2112xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x2112xbf16>
  return %0 : tensor<?x2112xbf16>
}


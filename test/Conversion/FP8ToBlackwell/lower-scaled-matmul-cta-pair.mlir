// RUN: fp8-opt %s -fp8-attach-target=chip=sm_100a -fp8-lower-scaled-matmul | FileCheck %s

// The cta_group::2 variant: tile 256x256x128 with a 2x1 cluster. Each CTA
// of the pair holds 128 rows of A and 128 of B's 256 rows per stage; the
// leader (rank 0) issues tcgen05.mma.cta_group::2 (M = 256) and commits to
// both CTAs' barriers; each CTA's epilogue reads its own 128 TMEM lanes.
// CHECK: gpu.func @[[K:fp8_gemm_tensorwise_e4m3_e4m3_bf16_n7168_k2048_t256x256x128_s4_c2x1_fast]](
// CHECK-SAME: block = [384, 1, 1]
// CHECK-SAME: cluster = [2, 1, 1]
// CHECK-SAME: grid = {kind = "persistent", tile_m = 128 : i64, tile_n = 256 : i64}
// CHECK-SAME: tensor_maps = [{box = [128, 128], dims = [2048, "M"]
// CHECK-SAME: {box = [128, 128], dims = [2048, 7168]
// CHECK-SAME: {box = [64, 128], dims = [7168, "M"]
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK-SAME: nvvm.maxntid = array<i32: 384, 1, 1>
// Four stages (full, empty), then the accumulators' full (one multicast
// commit) and empty (both CTAs' 256 epilogue threads, at the leader).
// CHECK-COUNT-8: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c512_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c512_i32
// Both CTAs' MMA warps allocate (cta_group::2), then the cluster syncs.
// CHECK: nvvm.tcgen05.alloc %{{.*}}, %c512_i32 {group = #nvvm.cta_group<cta_2>}
// CHECK-NEXT: nvvm.tcgen05.relinquish_alloc_permit {group = #nvvm.cta_group<cta_2>}
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: nvvm.read.ptx.sreg.cluster.ctarank
// Epilogue: own TMEM lanes, then the release arrives at the leader.
// CHECK: nvvm.tcgen05.ld
// CHECK: %[[EMPTY:.*]] = nvvm.mapa %{{.*}}, %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[EMPTY]] {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// Producer: this CTA's halves complete on the leader's full barrier.
// CHECK: nvvm.mapa %{{.*}}, %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c65536_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} {group = #nvvm.cta_group<cta_2>}
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} {group = #nvvm.cta_group<cta_2>}
// Producer tail: wait for the leader's last releases of the four stages.
// CHECK-COUNT-4: nvvm.mbarrier.try_wait.parity
// MMA: the leader's issuer, M = 256 / N = 256 (idesc 0x10400010).
// CHECK: nvvm.tcgen05.mma %{{.*}}, %c272629776_i32{{.*}} {ctaGroup = #nvvm.cta_group<cta_2>, kind = #nvvm.tcgen05_mma_kind<f8f6f4>}
// CHECK: nvvm.tcgen05.commit %{{.*}}, multicast_mask = %c3_i16 {group = #nvvm.cta_group<cta_2>}
// CHECK: nvvm.tcgen05.commit %{{.*}}, multicast_mask = %c3_i16 {group = #nvvm.cta_group<cta_2>}
// Exit: cluster sync, then both CTAs free the columns together.
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: nvvm.tcgen05.dealloc %{{.*}}, %c512_i32 {group = #nvvm.cta_group<cta_2>}
func.func @pair(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<7168x2048xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x7168xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 256x256x128, stages = 4, cluster = 2x1>} : (tensor<?x2048xf8E4M3FN>, tensor<7168x2048xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x7168xbf16>
  return %0 : tensor<?x7168xbf16>
}

// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-lower-scaled-matmul | FileCheck %s

// Per-tensor scales, TN, bf16 output: tile 128x256x128, 3 stages after the
// 64 KiB staging buffer; 384 threads (warp 0 TMA, warp 1 TMEM + MMA,
// warpgroups 1-2 epilogue).
// CHECK-LABEL: module attributes {fp8.target = #fp8.target<chip = "sm_100a", sm_count = 148, max_shared_memory_per_block = 232448, ptx_features = "+ptx88">, gpu.container_module}
// CHECK: func.func private @[[K:fp8_gemm_tensorwise_e4m3_e4m3_bf16_n7168_k2048_t128x256x128_s3_fast]]_launch_into({{.*}}, memref<?x7168xbf16> {bufferization.access = "write"}) attributes {fp8.kernel = @fp8_kernels::@[[K]]}
// CHECK: fp8.launch @[[K]]_launch_into(%arg0, %arg1, %arg2, %arg3, %{{.*}}) outputs [4]
// CHECK: gpu.func @[[K]](%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32) kernel
// CHECK-SAME: fp8.grid_constant_args = array<i32: 0, 1, 2>
// CHECK-SAME: block = [384, 1, 1]
// CHECK-SAME: chip = "sm_100a"
// CHECK-SAME: dynamic_shared_memory_bytes = 213080
// CHECK-SAME: programmatic_launch = true
// CHECK-SAME: tensor_maps = [{box = [128, 128], dims = [2048, "M"]
// CHECK-SAME: {box = [128, 256], dims = [2048, 7168]
// CHECK-SAME: nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32
// Stage ring (full: 1 expect_tx arrival; empty: 1 tcgen05.commit), then
// the two accumulators' full (1 commit) and empty (256 epilogue threads).
// CHECK-COUNT-6: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32
// Warp 1 allocates two accumulators of 256 columns.
// CHECK: nvvm.tcgen05.alloc %{{.*}}, %c512_i32 : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.tcgen05.relinquish_alloc_permit
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// After the prologue (no global memory), the wait for the grid before it
// (programmatic launch), then the roles.
// CHECK: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<1>
// CHECK: scf.if
// Epilogue: wait for the staging buffer and the accumulator, read it in 4
// pieces of 32 columns, release it after the last, stage and TMA-store.
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier id
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<32xi32>
// CHECK: nvvm.tcgen05.wait <load>
// CHECK-COUNT-3: nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<32xi32>
// CHECK: nvvm.tcgen05.wait <load>
// CHECK-NEXT: nvvm.tcgen05.fence <before>
// CHECK: nvvm.mbarrier.arrive
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-COUNT-4: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: } else {
// Producer: one elect.sync-chosen thread of warp 0, two K-major TMA loads
// per stage.
// CHECK: %[[ELECTED:.*]] = nvvm.elect.sync -> i1
// CHECK-NEXT: scf.if %[[ELECTED]] {
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c49152_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// MMA warp: one elected thread issues 4 MMAs (instruction descriptor
// 0x08400010: f32 D, e4m3 x e4m3, K-major, N 256, M 128; only the first of
// a tile's first block overwrites D), commits the stage, then the tile.
// CHECK: nvvm.elect.sync -> i1
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: arith.ori %{{.*}}, %c4611756662049538048_i64 : i64
// CHECK: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %c138412048_i32{{.*}}, %{{.*}} {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f8f6f4>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK-COUNT-3: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %c138412048_i32{{.*}}, %true
// CHECK: nvvm.tcgen05.commit %{{.*}} : !llvm.ptr<3>
// CHECK: nvvm.tcgen05.commit %{{.*}} : !llvm.ptr<3>
// Warp 1 frees Tensor Memory after everyone is done.
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.tcgen05.fence <after>
// CHECK: nvvm.tcgen05.dealloc %{{.*}}, %c512_i32 : !llvm.ptr<6>, i32
func.func @tensorwise(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<7168x2048xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>) -> tensor<?x7168xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x2048xf8E4M3FN>, tensor<7168x2048xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x7168xbf16>
  return %0 : tensor<?x7168xbf16>
}

// -----

// NT (B stored [K, N], MN-major), row-wise scales, accumulate into f32 C:
// direct stores, B loaded in two 128 x 128 boxes, the descriptor's B-major
// bit (16) set, B's descriptor LBO 16384 (next box) and SBO 1024.
// CHECK-LABEL: func.func @nt
// CHECK: gpu.func @fp8_gemm_rowwise_e4m3_e4m3_f32_n4096_k2048_t128x256x128_s4_fast_acc_bmn(
// CHECK-SAME: fp8.grid_constant_args = array<i32: 0, 1>
// CHECK-SAME: {dtype = "e4m3", name = "b", role = "input", shape = [2048, 4096]}
// CHECK-SAME: {box = [128, 128], dims = [4096, 2048], dtype = "e4m3", {{.*}} name = "tma_b", {{.*}} strides_bytes = [4096]
// CHECK: nvvm.tcgen05.alloc %{{.*}}, %c512_i32
// Epilogue: f32 groups of 4, C added, guarded direct stores.
// CHECK: nvvm.tcgen05.ld
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.store %{{.*}}, %{{.*}} : vector<4xf32>, !llvm.ptr<1>
// CHECK: } else {
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c49152_i32
// CHECK-COUNT-3: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.elect.sync
// CHECK: arith.ori %{{.*}}, %c4611756662116581376_i64 : i64
// CHECK: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %c138477584_i32
// CHECK: nvvm.tcgen05.dealloc
func.func @nt(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<2048x4096xf8E4M3FN>, %sa: tensor<?x1xf32>, %sb: tensor<4096x1xf32>, %c: tensor<?x4096xf32>) -> tensor<?x4096xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<?x2048xf8E4M3FN>, tensor<2048x4096xf8E4M3FN>, tensor<?x1xf32>, tensor<4096x1xf32>, tensor<?x4096xf32>) -> tensor<?x4096xf32>
  return %0 : tensor<?x4096xf32>
}

// RUN: fp8-opt %s --fp8-gpu-module-to-ptx=chip=sm_90a | FileCheck %s
// RUN: fp8-opt %s --fp8-gpu-module-to-ptx="chip=sm_90a opt-level=0" \
// RUN:   | FileCheck %s --check-prefix=O0

// A hand-written Hopper kernel in the shape fp8-lower-scaled-matmul produces
// (TMA loads through by-value tensor maps, an mbarrier, setmaxnreg, an e4m3
// wgmma) goes to PTX; the host function with tensors is left alone.

// CHECK-LABEL: func.func @host(
// CHECK-SAME:    tensor<128x64xf8E4M3FN>
// CHECK:       gpu.binary @kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">
// CHECK-SAME:    assembly = "
// CHECK-SAME:    .version 8.0
// CHECK-SAME:    .target sm_90a
// CHECK-SAME:    .entry gemm(
// CHECK-SAME:    .param .align 64 .b8 gemm_param_0[128]
// CHECK-SAME:    .param .align 64 .b8 gemm_param_1[128]
// CHECK-SAME:    .maxntid 384, 1, 1
// CHECK-SAME:    .minnctapersm 1
// CHECK-SAME:    cvta.param.u64
// CHECK-SAME:    cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-SAME:    mbarrier.try_wait.parity
// CHECK-SAME:    setmaxnreg.inc.sync.aligned.u32 {{.*}}232
// CHECK-SAME:    wgmma.fence.sync.aligned
// CHECK-SAME:    wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3
// CHECK-SAME:    wgmma.commit_group.sync.aligned
// CHECK-SAME:    wgmma.wait_group.sync.aligned {{.*}}0;
// CHECK-NOT:   gpu.module

// O0: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 0, chip = "sm_90a", features = "+ptx80">
// O0-SAME: wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3

module attributes {gpu.container_module} {
  func.func @host(%a: tensor<128x64xf8E4M3FN>) -> tensor<128x64xf8E4M3FN> {
    return %a : tensor<128x64xf8E4M3FN>
  }
  gpu.module @kernels {
    llvm.mlir.global external @__dynamic_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
    gpu.func @gemm(%tma_a: !llvm.ptr, %tma_b: !llvm.ptr, %out: !llvm.ptr<1>, %m: i32) kernel
        attributes {nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32,
                    fp8.grid_constant_args = array<i32: 0, 1>,
                    fp8.kernel_metadata = {name = "gemm", entry = "gemm", chip = "sm_90a"}} {
      %smem = llvm.mlir.addressof @__dynamic_smem : !llvm.ptr<3>
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %tid = gpu.thread_id x
      %tid32 = arith.index_cast %tid : index to i32
      %mbar = llvm.getelementptr %smem[16384] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
      %is0 = arith.cmpi eq, %tid32, %c0 : i32
      scf.if %is0 {
        nvvm.mbarrier.init %mbar, %c1 : !llvm.ptr<3>, i32
      }
      nvvm.fence.mbarrier.init
      gpu.barrier
      %txb = arith.constant 16384 : i32
      scf.if %is0 {
        nvvm.mbarrier.arrive.expect_tx %mbar, %txb : !llvm.ptr<3>, i32
        %dst = llvm.addrspacecast %smem : !llvm.ptr<3> to !llvm.ptr<7>
        nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tma_a, %mbar, box[%c0, %c0] : !llvm.ptr<7>, !llvm.ptr
        nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tma_b, %mbar, box[%c0, %m] : !llvm.ptr<7>, !llvm.ptr
      }
      %ticks = arith.constant 10000000 : i32
      nvvm.mbarrier.try_wait.parity %mbar, %c0, %ticks : !llvm.ptr<3>, i32, i32
      nvvm.setmaxregister increase 232
      %sa = llvm.ptrtoint %smem : !llvm.ptr<3> to i64
      %c4 = arith.constant 4 : i64
      %sh = arith.shrui %sa, %c4 : i64
      %mask = arith.constant 16383 : i64
      %lo = arith.andi %sh, %mask : i64
      %sbo = arith.constant 274877906944 : i64
      %sw = arith.constant 4611686018427387904 : i64
      %d0 = arith.ori %lo, %sbo : i64
      %desc = arith.ori %d0, %sw : i64
      %z = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      nvvm.wgmma.fence.aligned
      %acc = nvvm.wgmma.mma_async %desc, %desc, %z, <m = 64, n = 16, k = 32>, D [<f32>, <zero>], A [<e4m3>, <one>, <row>], B [<e4m3>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      %v = llvm.extractvalue %acc[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %p = llvm.getelementptr %out[%tid32] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %v, %p : f32, !llvm.ptr<1>
      gpu.return
    }
  }
}

// RUN: fp8-opt %s --split-input-file --verify-diagnostics \
// RUN:   --fp8-verify-target-support | FileCheck %s

// Each module is checked against its #nvvm.target before any LLVM code
// generation; problems are diagnostics, never backend aborts.
// (`verifyTarget = false` turns off the NVVM dialect's own check of
// RequiresSM traits, so that this pass is the one that reports.)

// CHECK-LABEL: gpu.module @hopper_ok
gpu.module @hopper_ok [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%d: i64) kernel {
    %z = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
    nvvm.wgmma.fence.aligned
    %acc = nvvm.wgmma.mma_async %d, %d, %z, <m = 64, n = 16, k = 32>, D [<f32>, <zero>], A [<e4m3>, <one>, <row>], B [<e4m3>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
    nvvm.setmaxregister increase 232
    gpu.return
  }
}

// -----

gpu.module @tcgen05_on_hopper [#nvvm.target<chip = "sm_90a", features = "+ptx80", verifyTarget = false>] {
  gpu.func @k(%p: !llvm.ptr<3>) kernel {
    %c32 = arith.constant 32 : i32
    // expected-error @below {{'nvvm.tcgen05.alloc' op needs sm_100a or sm_101a but the target is sm_90a (#nvvm.target of the module)}}
    nvvm.tcgen05.alloc %p, %c32 : !llvm.ptr<3>, i32
    gpu.return
  }
}

// -----

// wgmma.mma_async has no RequiresSM trait: the pass's own table catches it.
gpu.module @wgmma_on_blackwell [#nvvm.target<chip = "sm_100a", features = "+ptx88">] {
  gpu.func @k(%d: i64) kernel {
    %z = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
    // expected-error @below {{'nvvm.wgmma.mma_async' op needs sm_90a but the target is sm_100a}}
    %acc = nvvm.wgmma.mma_async %d, %d, %z, <m = 64, n = 16, k = 32>, D [<f32>, <zero>], A [<e4m3>, <one>, <row>], B [<e4m3>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
    gpu.return
  }
}

// -----

gpu.module @ue8m0_on_hopper [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: f32, %b: f32) kernel {
    // expected-error @below {{'nvvm.convert.f32x2.to.f8x2' op needs sm_100a, sm_101a or sm_120a but the target is sm_90a}}
    %r = nvvm.convert.f32x2.to.f8x2 %a, %b {rnd = #nvvm.fp_rnd_mode<rp>, sat = #nvvm.sat_mode<satfinite>} : i16 (f8E8M0FNU)
    gpu.return
  }
}

// -----

// expected-error @below {{PTX ISA +ptx78 (#nvvm.target of the module) is too old for sm_90a: it needs at least +ptx80}}
gpu.module @old_ptx [#nvvm.target<chip = "sm_90a", features = "+ptx78">] {
}

// -----

// expected-error @below {{PTX ISA +ptx87 (#nvvm.target of the module) is too old for sm_100a: it needs at least +ptx88}}
gpu.module @old_ptx_blackwell [#nvvm.target<chip = "sm_100a", features = "+ptx87">] {
}

// -----

// expected-error @below {{unknown PTX feature '+ptx99' (#nvvm.target of the module): the NVPTX backend supports up to +ptx}}
gpu.module @future_ptx [#nvvm.target<chip = "sm_90a", features = "+ptx99">] {
}

// -----

// expected-error @below {{features '' (#nvvm.target of the module) select no PTX ISA version: sm_90a needs at least +ptx80}}
gpu.module @no_ptx [#nvvm.target<chip = "sm_90a">] {
}

// -----

// expected-error @below {{features '+ptx80,+ptx88' (#nvvm.target of the module) select more than one PTX ISA version}}
gpu.module @two_ptx [#nvvm.target<chip = "sm_90a", features = "+ptx80,+ptx88">] {
}

// -----

// expected-error @below {{unknown chip 'sm_89': expected one of sm_90a, sm_100a (#nvvm.target of the module)}}
gpu.module @ada [#nvvm.target<chip = "sm_89", features = "+ptx80">] {
}

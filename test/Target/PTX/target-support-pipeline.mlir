// The chip of the pipelines is checked, with the ops, before
// fp8-attach-nvvm-target and LLVM: a tcgen05 op in a kernel compiled for
// sm_90a is a diagnostic on the op, not a backend abort.

// RUN: fp8-opt %s --split-input-file --verify-diagnostics \
// RUN:   --fp8-gpu-module-to-ptx=chip=sm_90a

// RUN: not fp8-opt %s --split-input-file \
// RUN:   --fp8-gpu-module-to-ptx=chip=sm_89 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: unknown chip 'sm_89': expected one of sm_90a, sm_100a

// RUN: not fp8-opt %s --split-input-file --fp8-to-ptx=chip=sm_89 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN-FULL
// UNKNOWN-FULL: error: unknown chip 'sm_89': expected one of sm_90a, sm_100a

// The optimization level is checked on the attached target, before LLVM.
// RUN: not fp8-opt %s --split-input-file \
// RUN:   --fp8-gpu-module-to-ptx="chip=sm_90a opt-level=7" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OPT
// OPT: error: optimization level 7 (#nvvm.target of the module) is not between 0 and 3

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%p: !llvm.ptr<3>) kernel {
      %c32 = arith.constant 32 : i32
      // expected-error @below {{'nvvm.tcgen05.alloc' op needs sm_100a or sm_101a but the target is sm_90a (fp8.target of the module)}}
      nvvm.tcgen05.alloc %p, %c32 : !llvm.ptr<3>, i32
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: f32, %b: f32, %out: !llvm.ptr<1>) kernel {
      // expected-error @below {{'nvvm.convert.f32x2.to.f8x2' op needs sm_100a, sm_101a or sm_120a but the target is sm_90a (fp8.target of the module)}}
      %r = nvvm.convert.f32x2.to.f8x2 %a, %b {rnd = #nvvm.fp_rnd_mode<rp>, sat = #nvvm.sat_mode<satfinite>} : i16 (f8E8M0FNU)
      llvm.store %r, %out : i16, !llvm.ptr<1>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

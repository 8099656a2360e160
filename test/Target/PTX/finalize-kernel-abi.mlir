// RUN: fp8-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(gpu.module(fp8-finalize-kernel-abi))' \
// RUN:   | FileCheck %s

// The listed tensor-map parameters become 128-byte, 64-aligned byval grid
// constants; the others keep their attributes; the helper attribute goes.

// CHECK-LABEL: gpu.module @kernels
// CHECK:       llvm.func @gemm(
// CHECK-SAME:    %{{arg[0-9]+}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME:    %{{arg[0-9]+}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME:    %{{arg[0-9]+}}: !llvm.ptr<1> {llvm.noalias},
// CHECK-SAME:    %{{arg[0-9]+}}: i32)
// CHECK-SAME:    attributes {
// CHECK-NOT:     fp8.grid_constant_args
// CHECK-SAME:    fp8.kernel_metadata = {name = "gemm"}
// CHECK-SAME:    nvvm.kernel
// CHECK:       llvm.func @no_tensor_maps(%{{arg[0-9]+}}: !llvm.ptr<1>)
// CHECK-NOT:     nvvm.grid_constant
gpu.module @kernels {
  llvm.func @gemm(%tma_a: !llvm.ptr, %tma_b: !llvm.ptr,
                  %d: !llvm.ptr<1> {llvm.noalias}, %m: i32)
      attributes {nvvm.kernel, fp8.grid_constant_args = array<i32: 0, 1>,
                  fp8.kernel_metadata = {name = "gemm"}} {
    llvm.return
  }
  llvm.func @no_tensor_maps(%d: !llvm.ptr<1>) attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

gpu.module @too_early {
  // expected-error @below {{still has 'fp8.grid_constant_args': run fp8-finalize-kernel-abi after convert-gpu-to-nvvm}}
  gpu.func @k(%tma: !llvm.ptr) kernel
      attributes {fp8.grid_constant_args = array<i32: 0>} {
    gpu.return
  }
}

// -----

gpu.module @out_of_range {
  // expected-error @below {{'fp8.grid_constant_args' lists parameter 2 but the function has 2}}
  llvm.func @k(%tma: !llvm.ptr, %m: i32)
      attributes {nvvm.kernel, fp8.grid_constant_args = array<i32: 0, 2>} {
    llvm.return
  }
}

// -----

gpu.module @not_a_pointer {
  // expected-error @below {{grid-constant parameter 1 must be an !llvm.ptr (a by-value CUtensorMap), got 'i32'}}
  llvm.func @k(%tma: !llvm.ptr, %m: i32)
      attributes {nvvm.kernel, fp8.grid_constant_args = array<i32: 1>} {
    llvm.return
  }
}

// -----

gpu.module @global_pointer {
  // expected-error @below {{grid-constant parameter 0 must be an !llvm.ptr (a by-value CUtensorMap), got '!llvm.ptr<1>'}}
  llvm.func @k(%tma: !llvm.ptr<1>)
      attributes {nvvm.kernel, fp8.grid_constant_args = array<i32: 0>} {
    llvm.return
  }
}

// -----

gpu.module @not_a_kernel {
  // expected-error @below {{has 'fp8.grid_constant_args' but is not an nvvm.kernel}}
  llvm.func @f(%tma: !llvm.ptr)
      attributes {fp8.grid_constant_args = array<i32: 0>} {
    llvm.return
  }
}

// -----

gpu.module @wrong_attribute_type {
  // expected-error @below {{'fp8.grid_constant_args' must be an array<i32> on an llvm.func}}
  llvm.func @k(%tma: !llvm.ptr)
      attributes {nvvm.kernel, fp8.grid_constant_args = [0 : i32]} {
    llvm.return
  }
}

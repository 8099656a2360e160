// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-lower-scaled-matmul | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t/h100 %t/b200
// RUN: fp8-compile %s --chip=sm_90a -o %t/h100
// RUN: fp8-compile %s --chip=sm_100a -o %t/b200
// RUN: cat %t/h100/*silu.ptx | FileCheck %s --check-prefix=PTX
// RUN: cat %t/b200/*silu.ptx | FileCheck %s --check-prefix=PTX

// The epilogue activation is evaluated in f32 after the scales and the bias
// (the shared KernelSkeleton emitter, in both targets' epilogues), before the
// output conversion: SiLU as x / (1 + 2^(-x log2 e)) with exp2 the NVVM
// intrinsic (PTX ex2.approx), not a libdevice call. The kernel name and the
// metadata say which.
// CHECK-LABEL: module attributes {fp8.target = #fp8.target<{{.*}}>, gpu.container_module}
// CHECK: func.func private @[[K:fp8_gemm_tensorwise_e4m3_e4m3_bf16_n2112_k2048_[a-z0-9_]*_bias_silu]]_launch
// CHECK: gpu.func @[[K]]
// CHECK-SAME: activation = "silu"
// CHECK: %[[BIASED:.*]] = arith.addf
// CHECK: %[[NEG:.*]] = arith.negf %[[BIASED]] : f32
// CHECK: %[[T:.*]] = arith.mulf %[[NEG]], %{{.*}} : f32
// CHECK: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"(%[[T]]) : (f32) -> f32
// CHECK: %[[D:.*]] = arith.addf %{{.*}}, %[[E]] : f32
// CHECK: arith.divf %[[BIASED]], %[[D]] : f32
// CHECK-NOT: __nv_
// PTX: ex2.approx.f32
// PTX-NOT: __nv_
func.func @silu(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<2112x2048xf8E4M3FN>, %s: tensor<f32>, %bias: tensor<2112xf32>) -> tensor<?x2112xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s bias %bias {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, activation = #fp8.activation<silu>} : (tensor<?x2048xf8E4M3FN>, tensor<2112x2048xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<2112xf32>) -> tensor<?x2112xbf16>
  return %0 : tensor<?x2112xbf16>
}

// -----

// GELU (erf): erfc(|x|/sqrt 2) by Abramowitz-Stegun 7.1.26, selected as is
// for x < 0 and as 2 - erfc otherwise; GELU (tanh) as x / (1 + e^(-2u)).
// CHECK-LABEL: module attributes {fp8.target = #fp8.target<{{.*}}>, gpu.container_module}
// CHECK-DAG: func.func private @{{fp8_gemm_rowwise_[a-z0-9_]*_gelu}}_launch
// CHECK-DAG: func.func private @{{fp8_gemm_rowwise_[a-z0-9_]*_gelu_tanh}}_launch
// CHECK: gpu.func @{{fp8_gemm_rowwise_[a-z0-9_]*_gelu}}(
// CHECK: arith.andi %{{.*}}, %c2147483647_i32 : i32
// CHECK: arith.constant 0.327591091 : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: gpu.func @{{fp8_gemm_rowwise_[a-z0-9_]*_gelu_tanh}}(
// CHECK: arith.constant 4.471500e-02 : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"
// CHECK: arith.divf
func.func @gelus(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<4096x2048xf8E4M3FN>, %sa: tensor<?x1xf32>, %sb: tensor<4096x1xf32>) -> (tensor<?x4096xbf16>, tensor<?x4096xf32>) {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>, activation = #fp8.activation<gelu>} : (tensor<?x2048xf8E4M3FN>, tensor<4096x2048xf8E4M3FN>, tensor<?x1xf32>, tensor<4096x1xf32>) -> tensor<?x4096xbf16>
  %1 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>, activation = #fp8.activation<gelu_tanh>} : (tensor<?x2048xf8E4M3FN>, tensor<4096x2048xf8E4M3FN>, tensor<?x1xf32>, tensor<4096x1xf32>) -> tensor<?x4096xf32>
  return %0, %1 : tensor<?x4096xbf16>, tensor<?x4096xf32>
}

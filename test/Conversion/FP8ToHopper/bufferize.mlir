// The host side bufferizes with upstream one-shot bufferization: the kernel
// launcher reads its operands and returns D, so no operand is copied.
// RUN: fp8-opt %s -fp8-lower-scaled-matmul -one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s
// The fp8-to-ptx pipeline does the same on its host side.
// RUN: fp8-opt %s -fp8-to-ptx | FileCheck %s --check-prefix=PIPELINE

// CHECK: func.func private @[[L:fp8_gemm_.*_launch]](memref<?x2048xf8E4M3FN, strided<[?, ?], offset: ?>> {bufferization.access = "read"}, memref<7168x2048xf8E4M3FN, {{.*}}> {bufferization.access = "read"}, memref<f32, {{.*}}> {bufferization.access = "read"}, memref<f32, {{.*}}> {bufferization.access = "read"}) -> memref<?x7168xbf16
// CHECK-LABEL: func.func @fprop(
// CHECK-SAME: %[[A:.*]]: memref<?x2048xf8E4M3FN
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.alloc
// CHECK: %[[D:.*]] = call @[[L]](%[[A]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: return %[[D]]

// PIPELINE: func.func @fprop({{.*}}memref<?x2048xf8E4M3FN
// PIPELINE: gpu.binary @fp8_kernels
func.func @fprop(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<7168x2048xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>) -> tensor<?x7168xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x2048xf8E4M3FN>, tensor<7168x2048xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x7168xbf16>
  return %0 : tensor<?x7168xbf16>
}

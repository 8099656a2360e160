// fp8.scaled_matmul bufferizes with upstream one-shot bufferization to its
// destination-passing memref form (operands read in place, D in a new
// buffer), which the lowering turns into a launcher call writing D. Tensors
// are dense: with identity-layout function boundaries (what fp8-to-ptx
// uses) the operands are read in place; a strided view (the default
// boundaries' fully dynamic layout) is first copied into a dense buffer,
// the only layout the kernels read.
// RUN: fp8-opt %s -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUFFERIZE
// RUN: fp8-opt %s -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul | FileCheck %s --check-prefix=LOWER
// RUN: fp8-opt %s -one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=STRIDED
// RUN: fp8-opt %s -fp8-to-ptx=chip=sm_90a | FileCheck %s --check-prefix=PIPELINE

// STRIDED-LABEL: func.func @fprop(
// STRIDED-SAME: %[[A:.*]]: memref<?x2048xf8E4M3FN, strided<[?, ?], offset: ?>>
// STRIDED: %[[M:.*]] = memref.dim %[[A]], %c0
// STRIDED: %[[DENSE:.*]] = memref.alloc(%[[M]]) {{.*}} : memref<?x2048xf8E4M3FN>
// STRIDED: memref.copy %[[A]], %[[DENSE]]
// STRIDED: fp8.scaled_matmul %[[DENSE]],

// BUFFERIZE-LABEL: func.func @fprop(
// BUFFERIZE-SAME: %[[A:.*]]: memref<?x2048xf8E4M3FN>, %[[B:.*]]: memref<7168x2048xf8E4M3FN>
// BUFFERIZE-NOT: memref.copy
// BUFFERIZE: %[[M:.*]] = memref.dim %[[A]], %c0
// BUFFERIZE: %[[D:.*]] = memref.alloc(%[[M]]) {{.*}} : memref<?x7168xbf16>
// BUFFERIZE: fp8.scaled_matmul %[[A]], %[[B]], %{{.*}}, %{{.*}} outs %[[D]]
// BUFFERIZE-NOT: memref.copy
// BUFFERIZE: return %[[D]]

// LOWER: func.func private @[[L:fp8_gemm_.*_launch_into]]({{.*}} {bufferization.access = "read"}, {{.*}} {bufferization.access = "write"}) attributes {fp8.kernel = @fp8_kernels::@{{.*}}}
// LOWER-LABEL: func.func @fprop(
// LOWER: %[[D:.*]] = memref.alloc
// LOWER: call @[[L]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[D]])
// LOWER-NOT: fp8.scaled_matmul
// LOWER: gpu.module @fp8_kernels

// PIPELINE: func.func @fprop({{.*}}memref<?x2048xf8E4M3FN
// PIPELINE: call @{{.*}}_launch_into
// PIPELINE: gpu.binary @fp8_kernels
func.func @fprop(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<7168x2048xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>) -> tensor<?x7168xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x2048xf8E4M3FN>, tensor<7168x2048xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x7168xbf16>
  return %0 : tensor<?x7168xbf16>
}

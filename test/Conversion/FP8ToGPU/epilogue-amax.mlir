// RUN: fp8-opt %s -one-shot-bufferize="bufferize-function-boundaries allow-unknown-ops" | FileCheck %s --check-prefix=BUF
// RUN: fp8-opt %s -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul | FileCheck %s
// RUN: fp8-opt %s -fp8-attach-target=chip=sm_100a -fp8-lower-scaled-matmul | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t/h100 %t/b200
// RUN: fp8-compile %s --chip=sm_90a -o %t/h100
// RUN: fp8-compile %s --chip=sm_100a -o %t/b200
// RUN: cat %t/h100/*_amax.ptx | FileCheck %s --check-prefix=PTX
// RUN: cat %t/b200/*_amax.ptx | FileCheck %s --check-prefix=PTX
// RUN: cat %t/h100/*_amax.json | FileCheck %s --check-prefix=JSON

// The output amax: bufferization (or the lowering, on tensors) gives the op
// a zero-filled f32 buffer to max-accumulate into; the epilogue folds |D| as stored (rounded to bf16,
// elements inside D only) into a per-thread max, reduces it across the warp
// with shuffles and max-accumulates the f32 bits with one atomic per warp
// and tile.
// BUF-LABEL: func.func @amax
// BUF: %[[D:.*]] = memref.alloc({{.*}}) {{.*}} : memref<?x2112xbf16>
// BUF: %[[AMAX:.*]] = memref.alloc() {{.*}} : memref<f32>
// BUF: linalg.fill ins(%{{.*}} : f32) outs(%[[AMAX]] : memref<f32>)
// BUF: fp8.scaled_matmul {{.*}} outs %[[D]] amax_outs %[[AMAX]]
// CHECK-LABEL: module attributes {fp8.target = #fp8.target<{{.*}}>, gpu.container_module}
// CHECK: func.func private @[[K:fp8_gemm_tensorwise_e4m3_e4m3_bf16_n2112_k2048_[a-z0-9_]*_fast_bias_amax]]_launch_into(
// CHECK-SAME: memref<?x2112xbf16> {bufferization.access = "write"}, memref<f32> {bufferization.access = "read-write"})
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: fp8.launch @[[K]]_launch_into(%arg0, %arg1, %arg2, %arg2, %arg3, %{{.*}}, %[[Z]]) outputs [5, 6]
// CHECK: gpu.func @[[K]]
// CHECK-SAME: output_amax = true
// CHECK-SAME: {dtype = "f32", name = "amax", role = "output", shape = []}
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.andi %{{.*}}, %c2147483647_i32
// CHECK: arith.maximumf
// CHECK: nvvm.shfl.sync bfly
// CHECK: arith.maxui
// CHECK: llvm.atomicrmw umax %{{.*}}, %{{.*}} monotonic : !llvm.ptr<1>, i32
// PTX: shfl.sync.bfly.b32
// PTX: atom.global.max.u32
// JSON: "name": "amax"
func.func @amax(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<2112x2048xf8E4M3FN>, %s: tensor<f32>, %bias: tensor<2112xf32>) -> (tensor<?x2112xbf16>, tensor<f32>) {
  %0, %1 = fp8.scaled_matmul %a, %b, %s, %s bias %bias {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x2048xf8E4M3FN>, tensor<2112x2048xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<2112xf32>) -> (tensor<?x2112xbf16>, tensor<f32>)
  return %0, %1 : tensor<?x2112xbf16>, tensor<f32>
}

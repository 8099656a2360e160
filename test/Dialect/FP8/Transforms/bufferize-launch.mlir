// RUN: fp8-opt %s -split-input-file -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s

func.func private @amax_launch_into(memref<64x128xbf16> {bufferization.access = "read"}, memref<f32> {bufferization.access = "read-write"})
func.func private @scale_launch_into(memref<16xf32> {bufferization.access = "read-write"}, memref<f32> {bufferization.access = "read"}, memref<f32> {bufferization.access = "write"}, memref<f32> {bufferization.access = "write"})

// Outputs from tensor.empty / a fill become new buffers; the launch a call of
// its launcher on the buffers, which the function returns.
// CHECK-LABEL: func.func @fresh(
// CHECK-SAME: %[[X:.*]]: memref<64x128xbf16>) -> memref<f32>
// CHECK: %[[A:.*]] = memref.alloc() {{.*}} : memref<f32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<f32>)
// CHECK: call @amax_launch_into(%[[X]], %[[A]]) : (memref<64x128xbf16>, memref<f32>) -> ()
// CHECK: return %[[A]]
func.func @fresh(%x: tensor<64x128xbf16>) -> tensor<f32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %a = fp8.launch @amax_launch_into(%x, %z) outputs [1] : (tensor<64x128xbf16>, tensor<f32>) -> tensor<f32>
  return %a : tensor<f32>
}

// The history is updated in place in the argument's buffer, which the
// function returns: no copy.
// CHECK-LABEL: func.func @in_place(
// CHECK-SAME: %[[H:.*]]: memref<16xf32>, %[[P:.*]]: memref<f32>)
// CHECK-NOT: memref.copy
// CHECK: %[[S:.*]] = memref.alloc() {{.*}} : memref<f32>
// CHECK: %[[SI:.*]] = memref.alloc() {{.*}} : memref<f32>
// CHECK: call @scale_launch_into(%[[H]], %[[P]], %[[S]], %[[SI]])
// CHECK: return %[[S]], %[[SI]], %[[H]]
func.func @in_place(%h: tensor<16xf32>, %p: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<16xf32>) {
  %s = tensor.empty() : tensor<f32>
  %si = tensor.empty() : tensor<f32>
  %r:3 = fp8.launch @scale_launch_into(%h, %p, %s, %si) outputs [0, 2, 3]
      : (tensor<16xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<16xf32>, tensor<f32>, tensor<f32>)
  return %r#1, %r#2, %r#0 : tensor<f32>, tensor<f32>, tensor<16xf32>
}

// -----

func.func private @scale_launch_into(memref<16xf32> {bufferization.access = "read-write"}, memref<f32> {bufferization.access = "read"}, memref<f32> {bufferization.access = "write"}, memref<f32> {bufferization.access = "write"})

// The old history is still read after the launch: the kernel updates a
// copy.
// CHECK-LABEL: func.func @old_value_kept(
// CHECK-SAME: %[[H:.*]]: memref<16xf32>, %[[P:.*]]: memref<f32>)
// CHECK: %[[C:.*]] = memref.alloc() {{.*}} : memref<16xf32>
// CHECK: memref.copy %[[H]], %[[C]]
// CHECK: call @scale_launch_into(%[[C]], %[[P]],
// CHECK: return %[[C]], %[[H]]
func.func @old_value_kept(%h: tensor<16xf32>, %p: tensor<f32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %s = tensor.empty() : tensor<f32>
  %si = tensor.empty() : tensor<f32>
  %r:3 = fp8.launch @scale_launch_into(%h, %p, %s, %si) outputs [0, 2, 3]
      : (tensor<16xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<16xf32>, tensor<f32>, tensor<f32>)
  return %r#0, %h : tensor<16xf32>, tensor<16xf32>
}

// -----

func.func private @gemm_launch_into(memref<8x16xf32> {bufferization.access = "read"}, memref<8x16xf32> {bufferization.access = "read"}, memref<8x16xf32> {bufferization.access = "write", fp8.in_place_of = 1 : i64})
func.func private @plain_launch_into(memref<8x16xf32> {bufferization.access = "read"}, memref<8x16xf32> {bufferization.access = "read"}, memref<8x16xf32> {bufferization.access = "write"})

// An output whose launcher argument says the kernel may update an input in
// place (`fp8.in_place_of`, a GEMM adding into C) given that input as its
// destination: written into the argument's buffer, which the function
// returns; no allocation, no copy.
// CHECK-LABEL: func.func @accumulate_in_place(
// CHECK-SAME: %[[A:.*]]: memref<8x16xf32>, %[[C:.*]]: memref<8x16xf32>) -> memref<8x16xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: call @gemm_launch_into(%[[A]], %[[C]], %[[C]])
// CHECK-NEXT: return %[[C]]
func.func @accumulate_in_place(%a: tensor<8x16xf32>, %c: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %d = fp8.launch @gemm_launch_into(%a, %c, %c) outputs [2] : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %d : tensor<8x16xf32>
}

// C still read after the launch: D goes into a new buffer, the kernel reads
// C from the argument (D's initial value is not read: no copy).
// CHECK-LABEL: func.func @c_read_after(
// CHECK-SAME: %[[A:.*]]: memref<8x16xf32>, %[[C:.*]]: memref<8x16xf32>)
// CHECK: %[[D:.*]] = memref.alloc() {{.*}} : memref<8x16xf32>
// CHECK-NOT: memref.copy
// CHECK: call @gemm_launch_into(%[[A]], %[[C]], %[[D]])
// CHECK: return %[[D]], %[[C]]
func.func @c_read_after(%a: tensor<8x16xf32>, %c: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %d = fp8.launch @gemm_launch_into(%a, %c, %c) outputs [2] : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %d, %c : tensor<8x16xf32>, tensor<8x16xf32>
}

// A kernel that reads C while it writes D elsewhere (no `fp8.in_place_of`)
// never gets C's buffer as D.
// CHECK-LABEL: func.func @not_in_place(
// CHECK-SAME: %[[A:.*]]: memref<8x16xf32>, %[[C:.*]]: memref<8x16xf32>)
// CHECK: %[[D:.*]] = memref.alloc() {{.*}} : memref<8x16xf32>
// CHECK: call @plain_launch_into(%[[A]], %[[C]], %[[D]])
// CHECK: return %[[D]]
func.func @not_in_place(%a: tensor<8x16xf32>, %c: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %d = fp8.launch @plain_launch_into(%a, %c, %c) outputs [2] : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %d : tensor<8x16xf32>
}

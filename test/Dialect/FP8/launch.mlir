// RUN: fp8-opt %s | FileCheck %s
// RUN: fp8-opt %s -mlir-print-op-generic | fp8-opt | FileCheck %s

// A kernel launch on tensors: the launcher's arguments are the buffers of
// the operands; `outputs` lists those the kernel writes, whose new values
// the op returns in that order (here the amax history, updated in place,
// before the scale and scale_inv).
// CHECK-LABEL: func.func @delayed_scale
// CHECK: %[[R:.*]]:3 = fp8.launch @scale_launch_into(%arg0, %arg1, %{{.*}}, %{{.*}}) outputs [0, 2, 3] : (tensor<16xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<16xf32>, tensor<f32>, tensor<f32>)
// CHECK: return %[[R]]#1, %[[R]]#2, %[[R]]#0
func.func private @scale_launch_into(memref<16xf32> {bufferization.access = "read-write"}, memref<f32> {bufferization.access = "read"}, memref<f32> {bufferization.access = "write"}, memref<f32> {bufferization.access = "write"})

func.func @delayed_scale(%history: tensor<16xf32>, %previous: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<16xf32>) {
  %s = tensor.empty() : tensor<f32>
  %si = tensor.empty() : tensor<f32>
  %r:3 = fp8.launch @scale_launch_into(%history, %previous, %s, %si) outputs [0, 2, 3]
      : (tensor<16xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<16xf32>, tensor<f32>, tensor<f32>)
  return %r#1, %r#2, %r#0 : tensor<f32>, tensor<f32>, tensor<16xf32>
}

// Dynamic extents: the launcher takes memrefs of the same shapes.
// CHECK-LABEL: func.func @dynamic
// CHECK: fp8.launch @dequantize_launch_into(%arg0, %arg1, %{{.*}}) outputs [2] : (tensor<?x256xf8E4M3FN>, tensor<f32>, tensor<?x256xbf16>) -> tensor<?x256xbf16>
func.func private @dequantize_launch_into(memref<?x256xf8E4M3FN> {bufferization.access = "read"}, memref<f32> {bufferization.access = "read"}, memref<?x256xbf16> {bufferization.access = "write"})

func.func @dynamic(%x: tensor<?x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x256xbf16> {
  %c0 = arith.constant 0 : index
  %r = tensor.dim %x, %c0 : tensor<?x256xf8E4M3FN>
  %y = tensor.empty(%r) : tensor<?x256xbf16>
  %d = fp8.launch @dequantize_launch_into(%x, %s, %y) outputs [2]
      : (tensor<?x256xf8E4M3FN>, tensor<f32>, tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// Blockwise scales as MX scales: 1x128 tiles with a run-time R, 128x128
// tiles of a 2112-row operand (17 tile rows), UE8M0 scales.
// CHECK-LABEL: func.func @scales_to_mx
// CHECK: fp8.scales_to_mx %arg0 {granularity = #fp8.granularity<tile 1x128>} : tensor<?x56xf32> -> tensor<?x224xf8E8M0FNU>
// CHECK: fp8.scales_to_mx %arg1 {granularity = #fp8.granularity<tile 128x128>} : tensor<17x56xf32> -> tensor<2112x224xf8E8M0FNU>
// CHECK: fp8.scales_to_mx %arg2 {granularity = #fp8.granularity<tile 1x64>} : tensor<8x3xf8E8M0FNU> -> tensor<8x5xf8E8M0FNU>
func.func @scales_to_mx(%a: tensor<?x56xf32>, %w: tensor<17x56xf32>, %e: tensor<8x3xf8E8M0FNU>)
    -> (tensor<?x224xf8E8M0FNU>, tensor<2112x224xf8E8M0FNU>, tensor<8x5xf8E8M0FNU>) {
  %0 = fp8.scales_to_mx %a {granularity = #fp8.granularity<tile 1x128>} : tensor<?x56xf32> -> tensor<?x224xf8E8M0FNU>
  %1 = fp8.scales_to_mx %w {granularity = #fp8.granularity<tile 128x128>} : tensor<17x56xf32> -> tensor<2112x224xf8E8M0FNU>
  %2 = fp8.scales_to_mx %e {granularity = #fp8.granularity<tile 1x64>} : tensor<8x3xf8E8M0FNU> -> tensor<8x5xf8E8M0FNU>
  return %0, %1, %2 : tensor<?x224xf8E8M0FNU>, tensor<2112x224xf8E8M0FNU>, tensor<8x5xf8E8M0FNU>
}

// RUN: fp8-opt %s -fp8-attach-target=chip=sm_90a -fp8-expand-linear | FileCheck %s

// In a step to split into forward and backward (fp8.split_backward), the
// expansion marks the output gradient as where the backward starts and
// names each quantization after the layer tensor it quantizes, which names
// what the forward saves for the backward.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %{{.*}}: tensor<64x128xbf16>, %{{.*}}: tensor<32x128xbf16>, %{{.*}}: tensor<64x32xbf16> {fp8.grad_output})
// CHECK-SAME: attributes {fp8.split_backward}
// CHECK: fp8.quantize %arg0 {fp8.name = "x"
// CHECK: fp8.quantize %arg1 {fp8.name = "w"
// CHECK: fp8.quantize %arg2 {fp8.name = "dy"
func.func @step(%x: tensor<64x128xbf16>, %w: tensor<32x128xbf16>, %dy: tensor<64x32xbf16>)
    -> (tensor<64x32xbf16>, tensor<64x128xbf16>, tensor<32x128xf32>) attributes {fp8.split_backward} {
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>} : (tensor<64x128xbf16>, tensor<32x128xbf16>) -> tensor<64x32xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.blockwise<>}
      : (tensor<64x128xbf16>, tensor<32x128xbf16>, tensor<64x32xbf16>) -> (tensor<64x128xbf16>, tensor<32x128xf32>)
  return %y, %dx, %dw : tensor<64x32xbf16>, tensor<64x128xbf16>, tensor<32x128xf32>
}

// Other functions get neither.
// CHECK-LABEL: func.func @unmarked(
// CHECK-NOT: fp8.grad_output
// CHECK-NOT: fp8.name
// CHECK: return
func.func @unmarked(%x: tensor<64x128xbf16>, %w: tensor<32x128xbf16>, %dy: tensor<64x32xbf16>)
    -> (tensor<64x32xbf16>, tensor<64x128xbf16>, tensor<32x128xf32>) {
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>} : (tensor<64x128xbf16>, tensor<32x128xbf16>) -> tensor<64x32xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.blockwise<>}
      : (tensor<64x128xbf16>, tensor<32x128xbf16>, tensor<64x32xbf16>) -> (tensor<64x128xbf16>, tensor<32x128xf32>)
  return %y, %dx, %dw : tensor<64x32xbf16>, tensor<64x128xbf16>, tensor<32x128xf32>
}

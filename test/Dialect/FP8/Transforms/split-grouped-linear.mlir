// RUN: fp8-opt %s -fp8-attach-target=chip=sm_90a -fp8-expand-linear -fp8-split-training-step | FileCheck %s

// An expert layer's training step split into forward and backward: the
// forward quantizes X and the experts' weights once and returns, with Y,
// the FP8 copies the backward reads (X^T [K, M] in 1x128 blocks along the
// tokens, each expert's W^T [G, K, N]) and their scales; the backward
// takes dY, both forms of the experts' rows and those, not X and W.
// CHECK-LABEL: func.func @grouped_linear_forward(
// CHECK-SAME: {fp8.name = "x"}
// CHECK-SAME: {fp8.name = "w"}
// CHECK-SAME: {fp8.name = "group_index"}
// CHECK-SAME: -> (tensor<1024x256xbf16> {fp8.name = "y"}, tensor<384x1024xf8E4M3FN> {fp8.name = "x_columnwise"}, tensor<384x8xf32> {fp8.name = "x_columnwise_scale_inv"}, tensor<4x384x256xf8E4M3FN> {fp8.name = "w_columnwise"}, tensor<4x3x2xf32> {fp8.name = "w_columnwise_scale_inv"})
// CHECK-COUNT-2: fp8.quantize
// CHECK: fp8.grouped_scaled_matmul {{.*}}m_contiguous
// CHECK-NOT: fp8.grouped_scaled_matmul
// CHECK: return
// CHECK-LABEL: func.func @grouped_linear_backward(
// CHECK-SAME: {fp8.name = "group_index"}
// CHECK-SAME: {fp8.name = "group_sizes"}
// CHECK-SAME: {fp8.grad_output, fp8.name = "dy"}
// CHECK-SAME: {fp8.name = "x_columnwise"}
// CHECK-SAME: -> (tensor<1024x384xbf16> {fp8.name = "dx"}, tensor<4x256x384xf32> {fp8.name = "dw"})
// CHECK: fp8.quantize
// CHECK-NOT: fp8.quantize
// CHECK: fp8.grouped_scaled_matmul {{.*}}m_contiguous
// CHECK: fp8.grouped_scaled_matmul {{.*}}k_grouped
// CHECK: return
func.func @grouped_linear(%x: tensor<1024x384xbf16> {fp8.name = "x"}, %w: tensor<4x256x384xbf16> {fp8.name = "w"},
                          %index: tensor<1024xi32> {fp8.name = "group_index"}, %sizes: tensor<4xi32> {fp8.name = "group_sizes"},
                          %dy: tensor<1024x256xbf16> {fp8.name = "dy"})
    -> (tensor<1024x256xbf16> {fp8.name = "y"}, tensor<1024x384xbf16> {fp8.name = "dx"}, tensor<4x256x384xf32> {fp8.name = "dw"})
    attributes {fp8.split_backward} {
  %y = fp8.grouped_linear %x, %w groups %index {recipe = #fp8.blockwise<>}
      : (tensor<1024x384xbf16>, tensor<4x256x384xbf16>, tensor<1024xi32>) -> tensor<1024x256xbf16>
  %dx, %dw = fp8.grouped_linear_backward %x, %w, %dy groups(%index, %sizes) {recipe = #fp8.blockwise<>}
      : (tensor<1024x384xbf16>, tensor<4x256x384xbf16>, tensor<1024x256xbf16>, tensor<1024xi32>, tensor<4xi32>)
      -> (tensor<1024x384xbf16>, tensor<4x256x384xf32>)
  return %y, %dx, %dw : tensor<1024x256xbf16>, tensor<1024x384xbf16>, tensor<4x256x384xf32>
}

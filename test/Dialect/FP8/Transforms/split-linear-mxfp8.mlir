// RUN: fp8-opt %s --fp8-to-ptx=chip=sm_100a | FileCheck %s

// MXFP8 (sm_100a only) as in split-linear.mlir: the forward quantizes X and
// W in both directions (1x32 blocks, untransposed) and keeps the columnwise
// copies and their UE8M0 scales for wgrad and dgrad.
// CHECK-LABEL: func.func @mxfp8_step(
// CHECK: call @[[QX:fp8_quantize_mxfp8_[a-z0-9_]+]]_launch_into(%arg0,
// CHECK: call @[[QW:fp8_quantize_mxfp8_[a-z0-9_]+]]_launch_into(%arg1,
// CHECK: call @[[FPROP:fp8_gemm_mxfp8_[a-z0-9_]+]]_launch_into(
// CHECK: call @[[QDY:fp8_quantize_mxfp8_[a-z0-9_]+]]_launch_into(%arg2,
// CHECK: call @[[DGRAD:fp8_gemm_mxfp8_[a-z0-9_]+]]_launch_into(
// CHECK: call @[[WGRAD:fp8_gemm_mxfp8_[a-z0-9_]+]]_launch_into(
// CHECK-NOT: call
// CHECK-LABEL: func.func @mxfp8_forward(
// CHECK-SAME: -> (memref<256x384xbf16> {fp8.name = "y"}, memref<256x512xf8E4M3FN> {fp8.name = "x_columnwise"}, memref<512x8xf8E8M0FNU> {fp8.name = "x_columnwise_scale_inv"}, memref<384x512xf8E4M3FN> {fp8.name = "w_columnwise"}, memref<512x12xf8E8M0FNU> {fp8.name = "w_columnwise_scale_inv"})
// CHECK: call @[[QX]]_launch_into(%arg0,
// CHECK: call @[[QW]]_launch_into(%arg1,
// CHECK: call @[[FPROP]]_launch_into(
// CHECK-NOT: call
// CHECK-LABEL: func.func @mxfp8_backward(
// CHECK-SAME: %arg0: memref<256x384xbf16> {fp8.grad_output, fp8.name = "dy"}, %[[XS:arg1]]: memref<256x512xf8E4M3FN> {fp8.name = "x_columnwise"}, %[[XSS:arg2]]: memref<512x8xf8E8M0FNU> {fp8.name = "x_columnwise_scale_inv"}, %[[WS:arg3]]: memref<384x512xf8E4M3FN> {fp8.name = "w_columnwise"}, %[[WSS:arg4]]: memref<512x12xf8E8M0FNU> {fp8.name = "w_columnwise_scale_inv"})
// CHECK: call @[[QDY]]_launch_into(%arg0,
// CHECK: call @[[DGRAD]]_launch_into(%{{[a-z0-9_]+}}, %[[WS]], %{{[a-z0-9_]+}}, %[[WSS]],
// CHECK: call @[[WGRAD]]_launch_into(%{{[a-z0-9_]+}}, %[[XS]], %{{[a-z0-9_]+}}, %[[XSS]],
// CHECK-NOT: call
func.func @mxfp8_step(%x: tensor<256x512xbf16>, %w: tensor<384x512xbf16>, %dy: tensor<256x384xbf16>)
    -> (tensor<256x384xbf16>, tensor<256x512xbf16>, tensor<384x512xf32>) {
  %y = fp8.linear %x, %w {recipe = #fp8.mxfp8<>} : (tensor<256x512xbf16>, tensor<384x512xbf16>) -> tensor<256x384xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.mxfp8<>}
      : (tensor<256x512xbf16>, tensor<384x512xbf16>, tensor<256x384xbf16>) -> (tensor<256x512xbf16>, tensor<384x512xf32>)
  return %y, %dx, %dw : tensor<256x384xbf16>, tensor<256x512xbf16>, tensor<384x512xf32>
}
func.func @mxfp8(%x: tensor<256x512xbf16> {fp8.name = "x"}, %w: tensor<384x512xbf16> {fp8.name = "w"}, %dy: tensor<256x384xbf16> {fp8.name = "dy"})
    -> (tensor<256x384xbf16> {fp8.name = "y"}, tensor<256x512xbf16> {fp8.name = "dx"}, tensor<384x512xf32> {fp8.name = "dw"})
    attributes {fp8.split_backward} {
  %y = fp8.linear %x, %w {recipe = #fp8.mxfp8<>} : (tensor<256x512xbf16>, tensor<384x512xbf16>) -> tensor<256x384xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.mxfp8<>}
      : (tensor<256x512xbf16>, tensor<384x512xbf16>, tensor<256x384xbf16>) -> (tensor<256x512xbf16>, tensor<384x512xf32>)
  return %y, %dx, %dw : tensor<256x384xbf16>, tensor<256x512xbf16>, tensor<384x512xf32>
}

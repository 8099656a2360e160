// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-expand-linear -verify-diagnostics

// In a step split into forward and backward, the backward starts at the
// output gradients passed to it: one computed inside the step cannot be.
func.func @computed_gradient(%x: tensor<64x128xbf16>, %w: tensor<32x128xbf16>, %g: tensor<64x32xbf16>)
    -> (tensor<64x32xbf16>, tensor<64x128xbf16>, tensor<32x128xf32>) attributes {fp8.split_backward} {
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<64x128xbf16>, tensor<32x128xbf16>) -> tensor<64x32xbf16>
  %dy = arith.subf %y, %g : tensor<64x32xbf16>
  // expected-error @+1 {{'fp8.linear_backward' op reads an output gradient that is not an argument of its function, which is split into forward and backward (fp8.split_backward): the backward starts at the gradients passed to it}}
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>}
      : (tensor<64x128xbf16>, tensor<32x128xbf16>, tensor<64x32xbf16>) -> (tensor<64x128xbf16>, tensor<32x128xf32>)
  return %y, %dx, %dw : tensor<64x32xbf16>, tensor<64x128xbf16>, tensor<32x128xf32>
}

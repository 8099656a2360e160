// RUN: fp8-opt %s -split-input-file -fp8-split-training-step -verify-diagnostics

// Nothing depends on an output gradient: there is no backward to split off.
// expected-error @+1 {{'func.func' op with fp8.split_backward has no backward: no op depends on an output gradient (an argument marked fp8.grad_output, as fp8-expand-linear marks those of fp8.linear_backward)}}
func.func @no_gradient(%x: tensor<4xf32>) -> tensor<4xf32> attributes {fp8.split_backward} {
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// The layers must be expanded first: the split depends on the
// quantizations both phases share.
func.func @unexpanded(%x: tensor<64x128xbf16>, %w: tensor<32x128xbf16>, %dy: tensor<64x32xbf16> {fp8.grad_output})
    -> (tensor<64x32xbf16>, tensor<64x128xbf16>, tensor<32x128xf32>) attributes {fp8.split_backward} {
  // expected-error @+1 {{'fp8.linear' op is not expanded: run fp8-expand-linear before fp8-split-training-step}}
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<64x128xbf16>, tensor<32x128xbf16>) -> tensor<64x32xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>}
      : (tensor<64x128xbf16>, tensor<32x128xbf16>, tensor<64x32xbf16>) -> (tensor<64x128xbf16>, tensor<32x128xf32>)
  return %y, %dx, %dw : tensor<64x32xbf16>, tensor<64x128xbf16>, tensor<32x128xf32>
}

// -----

func.func private @step_backward()

// expected-error @+1 {{'func.func' op cannot be split: its forward or backward name @step_backward is taken}}
func.func @step(%x: tensor<4xf32>, %g: tensor<4xf32> {fp8.grad_output}) -> tensor<4xf32> attributes {fp8.split_backward} {
  %y = arith.addf %x, %g : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op with fp8.split_backward must have a body of one block to split into forward and backward}}
func.func private @declaration(%g: tensor<4xf32> {fp8.grad_output}) -> tensor<4xf32> attributes {fp8.split_backward}

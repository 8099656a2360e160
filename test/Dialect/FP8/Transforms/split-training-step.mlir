// RUN: fp8-opt %s -split-input-file -fp8-split-training-step | FileCheck %s

// The backward is what depends on the output gradient (an argument marked
// fp8.grad_output): dY's quantization, dgrad and wgrad. The forward keeps
// the rest and returns, after its own results, the values the backward
// reads (the FP8 copies of X and W, named after the quantized tensor and
// output), which the backward takes after the arguments it reads; X and W
// themselves are not passed to the backward. Unnamed arguments and results
// are named by their position in the step; constants are recreated in each
// function that uses them.
// CHECK-LABEL: func.func @step_forward(
// CHECK-SAME: %[[X:.*]]: tensor<256x128xbf16> {fp8.name = "x"}, %[[W:.*]]: tensor<64x128xbf16> {fp8.name = "arg1"})
// CHECK-SAME: -> (tensor<256x64xbf16> {fp8.name = "y"}, tensor<128x256xf8E4M3FN> {fp8.name = "x_columnwise"}, tensor<f32> {fp8.name = "x_columnwise_scale_inv"}, tensor<128x64xf8E4M3FN> {fp8.name = "w_columnwise"}, tensor<f32> {fp8.name = "w_columnwise_scale_inv"})
// CHECK-SAME: attributes {kept}
// CHECK-NOT: fp8.split_backward
// CHECK: %[[S:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[XR:[^,]*]], %[[XRS:[^,]*]], %[[XC:[^,]*]], %[[XCS:[^ ]*]] = fp8.quantize %[[X]] scale %[[S]] {fp8.name = "x"
// CHECK: %[[WR:[^,]*]], %[[WRS:[^,]*]], %[[WC:[^,]*]], %[[WCS:[^ ]*]] = fp8.quantize %[[W]] scale %[[S]] {fp8.name = "w"
// CHECK: %[[Y:.*]] = fp8.scaled_matmul %[[XR]], %[[WR]], %[[XRS]], %[[WRS]]
// CHECK: return %[[Y]], %[[XC]], %[[XCS]], %[[WC]], %[[WCS]] :
// CHECK-LABEL: func.func @step_backward(
// CHECK-SAME: %[[DY:.*]]: tensor<256x64xbf16> {fp8.grad_output, fp8.name = "arg2"}, %[[XT:.*]]: tensor<128x256xf8E4M3FN> {fp8.name = "x_columnwise"}, %[[XTS:.*]]: tensor<f32> {fp8.name = "x_columnwise_scale_inv"}, %[[WT:.*]]: tensor<128x64xf8E4M3FN> {fp8.name = "w_columnwise"}, %[[WTS:.*]]: tensor<f32> {fp8.name = "w_columnwise_scale_inv"})
// CHECK-SAME: -> (tensor<256x128xbf16> {fp8.name = "result1"}, tensor<64x128xf32> {fp8.name = "dw"})
// CHECK: %[[S2:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DR:[^,]*]], %[[DRS:[^,]*]], %[[DC:[^,]*]], %[[DCS:[^ ]*]] = fp8.quantize %[[DY]] scale %[[S2]]
// CHECK: %[[DX:.*]] = fp8.scaled_matmul %[[DR]], %[[WT]], %[[DRS]], %[[WTS]]
// CHECK: %[[DW:.*]] = fp8.scaled_matmul %[[DC]], %[[XT]], %[[DCS]], %[[XTS]]
// CHECK: return %[[DX]], %[[DW]]
// CHECK-NOT: func.func @step(
func.func @step(%x: tensor<256x128xbf16> {fp8.name = "x"}, %w: tensor<64x128xbf16>,
                %dy: tensor<256x64xbf16> {fp8.grad_output})
    -> (tensor<256x64xbf16> {fp8.name = "y"}, tensor<256x128xbf16>, tensor<64x128xf32> {fp8.name = "dw"})
    attributes {fp8.split_backward, kept} {
  %s = arith.constant dense<1.0> : tensor<f32>
  %xq:4 = fp8.quantize %x scale %s {fp8.name = "x", recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>}
      : tensor<256x128xbf16>, tensor<f32> -> rowwise(tensor<256x128xf8E4M3FN>, tensor<f32>) columnwise(tensor<128x256xf8E4M3FN>, tensor<f32>)
  %wq:4 = fp8.quantize %w scale %s {fp8.name = "w", recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>}
      : tensor<64x128xbf16>, tensor<f32> -> rowwise(tensor<64x128xf8E4M3FN>, tensor<f32>) columnwise(tensor<128x64xf8E4M3FN>, tensor<f32>)
  %y = fp8.scaled_matmul %xq#0, %wq#0, %xq#1, %wq#1 {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<256x128xf8E4M3FN>, tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x64xbf16>
  %dq:4 = fp8.quantize %dy scale %s {fp8.name = "dy", recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>}
      : tensor<256x64xbf16>, tensor<f32> -> rowwise(tensor<256x64xf8E4M3FN>, tensor<f32>) columnwise(tensor<64x256xf8E4M3FN>, tensor<f32>)
  %dx = fp8.scaled_matmul %dq#0, %wq#2, %dq#1, %wq#3 {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<256x64xf8E4M3FN>, tensor<128x64xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x128xbf16>
  %dw = fp8.scaled_matmul %dq#2, %xq#2, %dq#3, %xq#3 {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<64x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<64x128xf32>
  return %y, %dx, %dw : tensor<256x64xbf16>, tensor<256x128xbf16>, tensor<64x128xf32>
}

// -----

// A value that is not a quantization output is saved as `savedI`; a saved
// name the step already uses gets a suffix; an argument returned as it is
// stays with the function that has it (the gradient with the backward);
// two layers' X get `x` and `x_1`.
// CHECK-LABEL: func.func @names_forward(
// CHECK-SAME: %{{.*}}: tensor<4xf32> {fp8.name = "passthrough"}, %{{.*}}: tensor<4x16xbf16> {fp8.name = "arg2"})
// CHECK-SAME: -> (tensor<4xf32> {fp8.name = "result0"}, tensor<4xf32> {fp8.name = "saved0"}, tensor<f32> {fp8.name = "x_rowwise_scale_inv_1"}, tensor<f32> {fp8.name = "x_1_rowwise_scale_inv"})
// CHECK-LABEL: func.func @names_backward(
// CHECK-SAME: %{{.*}}: tensor<4xf32> {fp8.grad_output, fp8.name = "arg1"}, %{{.*}}: tensor<4xf32> {fp8.name = "saved0"}, %{{.*}}: tensor<f32> {fp8.name = "x_rowwise_scale_inv_1"}, %{{.*}}: tensor<f32> {fp8.name = "x_1_rowwise_scale_inv"})
// CHECK-SAME: -> (tensor<4xf32> {fp8.name = "x_rowwise_scale_inv"}, tensor<4xf32> {fp8.name = "sum"}, tensor<f32> {fp8.name = "result3"}, tensor<f32> {fp8.name = "result4"})
func.func @names(%a: tensor<4xf32> {fp8.name = "passthrough"}, %g: tensor<4xf32> {fp8.grad_output}, %x: tensor<4x16xbf16>)
    -> (tensor<4xf32>, tensor<4xf32> {fp8.name = "x_rowwise_scale_inv"}, tensor<4xf32> {fp8.name = "sum"}, tensor<f32>, tensor<f32>)
    attributes {fp8.split_backward} {
  %twice = arith.addf %a, %a : tensor<4xf32>
  %sum = arith.addf %twice, %g : tensor<4xf32>
  %s = arith.constant dense<1.0> : tensor<f32>
  %q1:2 = fp8.quantize %x scale %s {fp8.name = "x", recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>}
      : tensor<4x16xbf16>, tensor<f32> -> rowwise(tensor<4x16xf8E4M3FN>, tensor<f32>)
  %s2 = arith.constant dense<2.0> : tensor<f32>
  %q2:2 = fp8.quantize %x scale %s2 {fp8.name = "x", recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>}
      : tensor<4x16xbf16>, tensor<f32> -> rowwise(tensor<4x16xf8E4M3FN>, tensor<f32>)
  %c0 = arith.constant 0 : index
  %g0 = tensor.extract %g[%c0] : tensor<4xf32>
  %u1 = tensor.insert %g0 into %q1#1[] : tensor<f32>
  %u2 = tensor.insert %g0 into %q2#1[] : tensor<f32>
  return %a, %g, %sum, %u1, %u2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>
}

// -----

// Unmarked functions (an inference forward, say) are left as they are.
// CHECK-LABEL: func.func @inference(
// CHECK-NOT: _forward
func.func @inference(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

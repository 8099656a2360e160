// RUN: fp8-opt %s -split-input-file --fp8-to-ptx=chip=sm_90a | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: fp8-opt %s -split-input-file --fp8-to-ptx=chip=sm_100a | FileCheck %s --check-prefixes=CHECK,SM100

// A training step compiled whole (@NAME_step) and as forward + backward
// (@NAME, marked fp8.split_backward, the same body): the two functions
// launch the fused step's kernels in its order, split where the output
// gradient comes in. The forward quantizes X and W once and returns, with
// Y, the FP8 copies (1 byte per element) and scales the backward GEMMs
// read: on sm_90a the transposed columnwise ones, on sm_100a the copies
// its NN dgrad and NT wgrad read MN-major. The backward takes those, not X
// and W.

// Current scaling: amax + cast per tensor.
// CHECK-LABEL: func.func @current_step(
// CHECK: call @[[AX:fp8_amax_[a-z0-9_]+]]_launch_into(%arg0,
// CHECK: call @[[QX:fp8_quantize_[a-z0-9_]+]]_launch_into(%arg0,
// CHECK: call @[[AW:fp8_amax_[a-z0-9_]+]]_launch_into(%arg1,
// CHECK: call @[[QW:fp8_quantize_[a-z0-9_]+]]_launch_into(%arg1,
// CHECK: call @[[FPROP:fp8_gemm_[a-z0-9_]+]]_launch_into(
// CHECK: call @[[ADY:fp8_amax_[a-z0-9_]+]]_launch_into(%arg3,
// CHECK: call @[[QDY:fp8_quantize_[a-z0-9_]+]]_launch_into(%arg3,
// CHECK: call @[[DGRAD:fp8_gemm_[a-z0-9_]+]]_launch_into(
// CHECK: call @[[WGRAD:fp8_gemm_[a-z0-9_]+]]_launch_into(
// CHECK-NOT: call
// CHECK: return
// CHECK-LABEL: func.func @current_forward(
// CHECK-SAME: %arg0: memref<256x512xbf16> {fp8.name = "x"}, %arg1: memref<384x512xbf16> {fp8.name = "w"}, %arg2: memref<384xf32> {fp8.name = "bias"})
// SM90-SAME: -> (memref<256x384xbf16> {fp8.name = "y"}, memref<512x256xf8E4M3FN> {fp8.name = "x_columnwise"}, memref<f32> {fp8.name = "x_columnwise_scale_inv"}, memref<512x384xf8E4M3FN> {fp8.name = "w_columnwise"}, memref<f32> {fp8.name = "w_columnwise_scale_inv"})
// SM100-SAME: -> (memref<256x384xbf16> {fp8.name = "y"}, memref<256x512xf8E4M3FN> {fp8.name = "x_rowwise"}, memref<f32> {fp8.name = "x_rowwise_scale_inv"}, memref<384x512xf8E4M3FN> {fp8.name = "w_rowwise"}, memref<f32> {fp8.name = "w_rowwise_scale_inv"})
// CHECK: call @[[AX]]_launch_into(%arg0,
// CHECK: call @[[QX]]_launch_into(%arg0,
// CHECK: call @[[AW]]_launch_into(%arg1,
// CHECK: call @[[QW]]_launch_into(%arg1,
// CHECK: call @[[FPROP]]_launch_into(
// CHECK-NOT: call
// CHECK: return
// CHECK-LABEL: func.func @current_backward(
// CHECK-SAME: %arg0: memref<256x384xbf16> {fp8.grad_output, fp8.name = "dy"}, %[[XS:arg1]]: memref<{{[0-9]+x[0-9]+}}xf8E4M3FN> {fp8.name = "x_{{row|column}}wise"}, %[[XSS:arg2]]: memref<f32> {fp8.name = "x_{{row|column}}wise_scale_inv"}, %[[WS:arg3]]: memref<{{[0-9]+x[0-9]+}}xf8E4M3FN> {fp8.name = "w_{{row|column}}wise"}, %[[WSS:arg4]]: memref<f32> {fp8.name = "w_{{row|column}}wise_scale_inv"})
// CHECK-SAME: -> (memref<256x512xbf16> {fp8.name = "dx"}, memref<384x512xf32> {fp8.name = "dw"})
// CHECK: call @[[ADY]]_launch_into(%arg0,
// CHECK: call @[[QDY]]_launch_into(%arg0,
// CHECK: call @[[DGRAD]]_launch_into(%{{[a-z0-9_]+}}, %[[WS]], %{{[a-z0-9_]+}}, %[[WSS]],
// CHECK: call @[[WGRAD]]_launch_into(%{{[a-z0-9_]+}}, %[[XS]], %{{[a-z0-9_]+}}, %[[XSS]],
// CHECK-NOT: call
// CHECK: return
// An inference function (fp8.linear only, unmarked) is compiled as before:
// Y is its only result.
// CHECK-LABEL: func.func @current_inference(
// CHECK-SAME: -> memref<256x384xbf16> {
// CHECK: call @[[AX]]_launch_into(%arg0,
// CHECK: call @{{fp8_quantize_[a-z0-9_]+}}_row_launch_into(%arg0,
// CHECK: call @[[AW]]_launch_into(%arg1,
// CHECK: call @{{fp8_quantize_[a-z0-9_]+}}_row_launch_into(%arg1,
// CHECK: call @[[FPROPI:fp8_gemm_[a-z0-9_]+]]_launch_into(
// CHECK-NOT: call
// CHECK: return
func.func @current_step(%x: tensor<256x512xbf16> {fp8.name = "x"}, %w: tensor<384x512xbf16> {fp8.name = "w"},
                        %bias: tensor<384xf32> {fp8.name = "bias"}, %dy: tensor<256x384xbf16> {fp8.name = "dy"})
    -> (tensor<256x384xbf16> {fp8.name = "y"}, tensor<256x512xbf16> {fp8.name = "dx"}, tensor<384x512xf32> {fp8.name = "dw"}) {
  %y = fp8.linear %x, %w bias %bias {recipe = #fp8.current<>}
      : (tensor<256x512xbf16>, tensor<384x512xbf16>, tensor<384xf32>) -> tensor<256x384xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>}
      : (tensor<256x512xbf16>, tensor<384x512xbf16>, tensor<256x384xbf16>) -> (tensor<256x512xbf16>, tensor<384x512xf32>)
  return %y, %dx, %dw : tensor<256x384xbf16>, tensor<256x512xbf16>, tensor<384x512xf32>
}
func.func @current(%x: tensor<256x512xbf16> {fp8.name = "x"}, %w: tensor<384x512xbf16> {fp8.name = "w"},
                   %bias: tensor<384xf32> {fp8.name = "bias"}, %dy: tensor<256x384xbf16> {fp8.name = "dy"})
    -> (tensor<256x384xbf16> {fp8.name = "y"}, tensor<256x512xbf16> {fp8.name = "dx"}, tensor<384x512xf32> {fp8.name = "dw"})
    attributes {fp8.split_backward} {
  %y = fp8.linear %x, %w bias %bias {recipe = #fp8.current<>}
      : (tensor<256x512xbf16>, tensor<384x512xbf16>, tensor<384xf32>) -> tensor<256x384xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>}
      : (tensor<256x512xbf16>, tensor<384x512xbf16>, tensor<256x384xbf16>) -> (tensor<256x512xbf16>, tensor<384x512xf32>)
  return %y, %dx, %dw : tensor<256x384xbf16>, tensor<256x512xbf16>, tensor<384x512xf32>
}
func.func @current_inference(%x: tensor<256x512xbf16>, %w: tensor<384x512xbf16>, %bias: tensor<384xf32>) -> tensor<256x384xbf16> {
  %y = fp8.linear %x, %w bias %bias {recipe = #fp8.current<>}
      : (tensor<256x512xbf16>, tensor<384x512xbf16>, tensor<384xf32>) -> tensor<256x384xbf16>
  return %y : tensor<256x384xbf16>
}

// -----

// Delayed scaling: the casts record the amaxes into the histories (updated
// in place) and the scale updates follow their tensors: X's and W's in the
// forward, dY's in the backward.
// CHECK-LABEL: func.func @delayed_step(
// CHECK: call @[[QX:fp8_quantize_[a-z0-9_]+]]_launch_into(%arg0, %arg4, {{.*}}, %arg7)
// CHECK: call @[[QW:fp8_quantize_[a-z0-9_]+]]_launch_into(%arg1, %arg5, {{.*}}, %arg8)
// CHECK: call @[[FPROP:fp8_gemm_[a-z0-9_]+]]_launch_into(
// CHECK: call @[[QDY:fp8_quantize_[a-z0-9_]+]]_launch_into(%arg2, %arg6, {{.*}}, %arg9)
// CHECK: call @[[DGRAD:fp8_gemm_[a-z0-9_]+]]_launch_into(
// CHECK: call @[[WGRAD:fp8_gemm_[a-z0-9_]+]]_launch_into(
// CHECK: call @[[CSX:fp8_compute_scale_[a-z0-9_]+]]_launch_into(%arg7, %arg4,
// CHECK: call @[[CSX]]_launch_into(%arg8, %arg5,
// CHECK: call @[[CSDY:fp8_compute_scale_[a-z0-9_]+]]_launch_into(%arg9, %arg6,
// CHECK-NOT: call
// CHECK: return
// CHECK-LABEL: func.func @delayed_forward(
// CHECK-SAME: %arg0: memref<256x512xbf16> {fp8.name = "x"}, %arg1: memref<384x512xbf16> {fp8.name = "w"}, %arg2: memref<f32> {fp8.name = "x_scale"}, %arg3: memref<f32> {fp8.name = "w_scale"}, %arg4: memref<16xf32> {fp8.name = "x_history"}, %arg5: memref<16xf32> {fp8.name = "w_history"})
// CHECK-SAME: -> (memref<256x384xbf16> {fp8.name = "y"}, memref<f32> {fp8.name = "x_scale_next"}, memref<f32> {fp8.name = "w_scale_next"}, memref<16xf32> {fp8.name = "x_history_next"}, memref<16xf32> {fp8.name = "w_history_next"}, memref<{{[0-9]+x[0-9]+}}xf8E4M3FN> {fp8.name = "x_{{row|column}}wise"}
// CHECK: call @[[QX]]_launch_into(%arg0, %arg2, {{.*}}, %arg4)
// CHECK: call @[[QW]]_launch_into(%arg1, %arg3, {{.*}}, %arg5)
// CHECK: call @[[FPROP]]_launch_into(
// CHECK: call @[[CSX]]_launch_into(%arg4, %arg2,
// CHECK: call @[[CSX]]_launch_into(%arg5, %arg3,
// CHECK-NOT: call
// The histories are updated in place: the forward returns its arguments.
// CHECK: return %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %arg4, %arg5,
// CHECK-LABEL: func.func @delayed_backward(
// CHECK-SAME: %arg0: memref<256x384xbf16> {fp8.grad_output, fp8.name = "dy"}, %arg1: memref<384x512xf32> {fp8.name = "main_grad"}, %arg2: memref<f32> {fp8.name = "dy_scale"}, %arg3: memref<16xf32> {fp8.name = "dy_history"}, %arg4: memref<{{[0-9]+x[0-9]+}}xf8E4M3FN> {fp8.name = "x_{{row|column}}wise"}
// CHECK-SAME: -> (memref<256x512xbf16> {fp8.name = "dx"}, memref<384x512xf32> {fp8.name = "dw"}, memref<f32> {fp8.name = "dy_scale_next"}, memref<16xf32> {fp8.name = "dy_history_next"})
// CHECK: call @[[QDY]]_launch_into(%arg0, %arg2, {{.*}}, %arg3)
// CHECK: call @[[DGRAD]]_launch_into(
// CHECK: call @[[WGRAD]]_launch_into(
// CHECK: call @[[CSDY]]_launch_into(%arg3, %arg2,
// CHECK-NOT: call
// CHECK: return %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %arg3 :
func.func @delayed_step(%x: tensor<256x512xbf16>, %w: tensor<384x512xbf16>, %dy: tensor<256x384xbf16>, %main_grad: tensor<384x512xf32>,
                        %x_scale: tensor<f32>, %w_scale: tensor<f32>, %dy_scale: tensor<f32>,
                        %x_history: tensor<16xf32>, %w_history: tensor<16xf32>, %dy_history: tensor<16xf32>)
    -> (tensor<256x384xbf16>, tensor<256x512xbf16>, tensor<384x512xf32>, tensor<f32>, tensor<f32>, tensor<f32>,
        tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %y, %xa, %wa = fp8.linear %x, %w scales(%x_scale, %w_scale) {recipe = #fp8.delayed<history = 16>}
      : (tensor<256x512xbf16>, tensor<384x512xbf16>, tensor<f32>, tensor<f32>) -> (tensor<256x384xbf16>, tensor<f32>, tensor<f32>)
  %dx, %dw, %dya = fp8.linear_backward %x, %w, %dy accumulate_into %main_grad scales(%x_scale, %w_scale, %dy_scale) {recipe = #fp8.delayed<history = 16>}
      : (tensor<256x512xbf16>, tensor<384x512xbf16>, tensor<256x384xbf16>, tensor<384x512xf32>, tensor<f32>, tensor<f32>, tensor<f32>)
      -> (tensor<256x512xbf16>, tensor<384x512xf32>, tensor<f32>)
  %xh = fp8.update_amax_history %x_history, %xa {recipe = #fp8.delayed<history = 16>} : tensor<16xf32>, tensor<f32>
  %wh = fp8.update_amax_history %w_history, %wa {recipe = #fp8.delayed<history = 16>} : tensor<16xf32>, tensor<f32>
  %dyh = fp8.update_amax_history %dy_history, %dya {recipe = #fp8.delayed<history = 16>} : tensor<16xf32>, tensor<f32>
  %xs, %xsi, %xh1 = fp8.compute_scale %xh, %x_scale {recipe = #fp8.delayed<history = 16>, element_type = f8E4M3FN}
      : tensor<16xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<16xf32>
  %ws, %wsi, %wh1 = fp8.compute_scale %wh, %w_scale {recipe = #fp8.delayed<history = 16>, element_type = f8E4M3FN}
      : tensor<16xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<16xf32>
  %dys, %dysi, %dyh1 = fp8.compute_scale %dyh, %dy_scale {recipe = #fp8.delayed<history = 16>, element_type = f8E5M2}
      : tensor<16xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<16xf32>
  return %y, %dx, %dw, %xs, %ws, %dys, %xh1, %wh1, %dyh1
      : tensor<256x384xbf16>, tensor<256x512xbf16>, tensor<384x512xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}
func.func @delayed(%x: tensor<256x512xbf16> {fp8.name = "x"}, %w: tensor<384x512xbf16> {fp8.name = "w"},
                   %dy: tensor<256x384xbf16> {fp8.name = "dy"}, %main_grad: tensor<384x512xf32> {fp8.name = "main_grad"},
                   %x_scale: tensor<f32> {fp8.name = "x_scale"}, %w_scale: tensor<f32> {fp8.name = "w_scale"}, %dy_scale: tensor<f32> {fp8.name = "dy_scale"},
                   %x_history: tensor<16xf32> {fp8.name = "x_history"}, %w_history: tensor<16xf32> {fp8.name = "w_history"}, %dy_history: tensor<16xf32> {fp8.name = "dy_history"})
    -> (tensor<256x384xbf16> {fp8.name = "y"}, tensor<256x512xbf16> {fp8.name = "dx"}, tensor<384x512xf32> {fp8.name = "dw"},
        tensor<f32> {fp8.name = "x_scale_next"}, tensor<f32> {fp8.name = "w_scale_next"}, tensor<f32> {fp8.name = "dy_scale_next"},
        tensor<16xf32> {fp8.name = "x_history_next"}, tensor<16xf32> {fp8.name = "w_history_next"}, tensor<16xf32> {fp8.name = "dy_history_next"})
    attributes {fp8.split_backward} {
  %y, %xa, %wa = fp8.linear %x, %w scales(%x_scale, %w_scale) {recipe = #fp8.delayed<history = 16>}
      : (tensor<256x512xbf16>, tensor<384x512xbf16>, tensor<f32>, tensor<f32>) -> (tensor<256x384xbf16>, tensor<f32>, tensor<f32>)
  %dx, %dw, %dya = fp8.linear_backward %x, %w, %dy accumulate_into %main_grad scales(%x_scale, %w_scale, %dy_scale) {recipe = #fp8.delayed<history = 16>}
      : (tensor<256x512xbf16>, tensor<384x512xbf16>, tensor<256x384xbf16>, tensor<384x512xf32>, tensor<f32>, tensor<f32>, tensor<f32>)
      -> (tensor<256x512xbf16>, tensor<384x512xf32>, tensor<f32>)
  %xh = fp8.update_amax_history %x_history, %xa {recipe = #fp8.delayed<history = 16>} : tensor<16xf32>, tensor<f32>
  %wh = fp8.update_amax_history %w_history, %wa {recipe = #fp8.delayed<history = 16>} : tensor<16xf32>, tensor<f32>
  %dyh = fp8.update_amax_history %dy_history, %dya {recipe = #fp8.delayed<history = 16>} : tensor<16xf32>, tensor<f32>
  %xs, %xsi, %xh1 = fp8.compute_scale %xh, %x_scale {recipe = #fp8.delayed<history = 16>, element_type = f8E4M3FN}
      : tensor<16xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<16xf32>
  %ws, %wsi, %wh1 = fp8.compute_scale %wh, %w_scale {recipe = #fp8.delayed<history = 16>, element_type = f8E4M3FN}
      : tensor<16xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<16xf32>
  %dys, %dysi, %dyh1 = fp8.compute_scale %dyh, %dy_scale {recipe = #fp8.delayed<history = 16>, element_type = f8E5M2}
      : tensor<16xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<16xf32>
  return %y, %dx, %dw, %xs, %ws, %dys, %xh1, %wh1, %dyh1
      : tensor<256x384xbf16>, tensor<256x512xbf16>, tensor<384x512xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// Blockwise: on sm_100a the forward's FP8 copies carry their scales in the
// MXFP8 GEMMs' UE8M0 atom layout, as in the fused step.
// CHECK-LABEL: func.func @blockwise_step(
// CHECK: call @[[QX:fp8_quantize_[a-z0-9_]+]]_launch_into(%arg0,
// CHECK: call @[[QW:fp8_quantize_[a-z0-9_]+]]_launch_into(%arg1,
// CHECK: call @[[FPROP:fp8_gemm_[a-z0-9_]+]]_launch_into(
// CHECK: call @[[QDY:fp8_quantize_[a-z0-9_]+]]_launch_into(%arg2,
// CHECK: call @[[DGRAD:fp8_gemm_[a-z0-9_]+]]_launch_into(
// CHECK: call @[[WGRAD:fp8_gemm_[a-z0-9_]+]]_launch_into(
// CHECK-NOT: call
// CHECK-LABEL: func.func @blockwise_forward(
// SM90-SAME: -> (memref<256x384xbf16> {fp8.name = "y"}, memref<512x256xf8E4M3FN> {fp8.name = "x_columnwise"}, memref<512x2xf32> {fp8.name = "x_columnwise_scale_inv"}, memref<512x384xf8E4M3FN> {fp8.name = "w_columnwise"}, memref<4x3xf32> {fp8.name = "w_columnwise_scale_inv"})
// SM100-SAME: -> (memref<256x384xbf16> {fp8.name = "y"}, memref<256x512xf8E4M3FN> {fp8.name = "x_columnwise"}, memref<512x8xf8E8M0FNU> {fp8.name = "x_columnwise_scale_inv"}, memref<384x512xf8E4M3FN> {fp8.name = "w_columnwise"}, memref<512x12xf8E8M0FNU> {fp8.name = "w_columnwise_scale_inv"})
// CHECK: call @[[QX]]_launch_into(%arg0,
// CHECK: call @[[QW]]_launch_into(%arg1,
// CHECK: call @[[FPROP]]_launch_into(
// CHECK-NOT: call
// CHECK-LABEL: func.func @blockwise_backward(
// CHECK-SAME: %arg0: memref<256x384xbf16> {fp8.grad_output, fp8.name = "dy"}, %arg1: memref<384x512xf32> {fp8.name = "main_grad"}, %[[XS:arg2]]: {{.*}} {fp8.name = "x_columnwise"}, %[[XSS:arg3]]: {{.*}} {fp8.name = "x_columnwise_scale_inv"}, %[[WS:arg4]]: {{.*}} {fp8.name = "w_columnwise"}, %[[WSS:arg5]]: {{.*}} {fp8.name = "w_columnwise_scale_inv"})
// CHECK: call @[[QDY]]_launch_into(%arg0,
// CHECK: call @[[DGRAD]]_launch_into(%{{[a-z0-9_]+}}, %[[WS]], %{{[a-z0-9_]+}}, %[[WSS]],
// CHECK: call @[[WGRAD]]_launch_into(%{{[a-z0-9_]+}}, %[[XS]], %{{[a-z0-9_]+}}, %[[XSS]], %arg1,
// CHECK-NOT: call
func.func @blockwise_step(%x: tensor<256x512xbf16>, %w: tensor<384x512xbf16>, %dy: tensor<256x384xbf16>, %main_grad: tensor<384x512xf32>)
    -> (tensor<256x384xbf16>, tensor<256x512xbf16>, tensor<384x512xf32>) {
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>} : (tensor<256x512xbf16>, tensor<384x512xbf16>) -> tensor<256x384xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy accumulate_into %main_grad {recipe = #fp8.blockwise<>}
      : (tensor<256x512xbf16>, tensor<384x512xbf16>, tensor<256x384xbf16>, tensor<384x512xf32>) -> (tensor<256x512xbf16>, tensor<384x512xf32>)
  return %y, %dx, %dw : tensor<256x384xbf16>, tensor<256x512xbf16>, tensor<384x512xf32>
}
func.func @blockwise(%x: tensor<256x512xbf16> {fp8.name = "x"}, %w: tensor<384x512xbf16> {fp8.name = "w"},
                     %dy: tensor<256x384xbf16> {fp8.name = "dy"}, %main_grad: tensor<384x512xf32> {fp8.name = "main_grad"})
    -> (tensor<256x384xbf16> {fp8.name = "y"}, tensor<256x512xbf16> {fp8.name = "dx"}, tensor<384x512xf32> {fp8.name = "dw"})
    attributes {fp8.split_backward} {
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>} : (tensor<256x512xbf16>, tensor<384x512xbf16>) -> tensor<256x384xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy accumulate_into %main_grad {recipe = #fp8.blockwise<>}
      : (tensor<256x512xbf16>, tensor<384x512xbf16>, tensor<256x384xbf16>, tensor<384x512xf32>) -> (tensor<256x512xbf16>, tensor<384x512xf32>)
  return %y, %dx, %dw : tensor<256x384xbf16>, tensor<256x512xbf16>, tensor<384x512xf32>
}

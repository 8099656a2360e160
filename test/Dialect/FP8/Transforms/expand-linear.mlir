// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-expand-linear -verify-diagnostics | FileCheck %s --check-prefix=H100
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-expand-linear | FileCheck %s --check-prefix=B200

// Seed 000's flows: X [M, K], W [N, K], dY [M, N]; fprop Y = X W^T,
// dgrad dX = dY W, wgrad dW = dY^T X. sm_90a runs TN only, so the backward
// reads transposed columnwise copies made by the same quantize (one read);
// sm_100a reads MN-major operands.

// Per-tensor delayed scaling, hybrid format: E4M3 X and W, E5M2 dY; each
// tensor quantized once for all its GEMMs; the amaxes come from those casts.
// H100-LABEL: func.func @delayed_hybrid
// H100:      %[[X:.*]], %[[XS:.*]], %[[XT:.*]], %[[XTS:.*]], %[[XA:.*]] = fp8.quantize %arg0 scale %arg4 {{.*}}granularity = #fp8.granularity<tensor>
// H100-SAME:   -> rowwise(tensor<256x512xf8E4M3FN>, tensor<f32>) columnwise(tensor<512x256xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
// H100:      %[[W:.*]], %[[WS:.*]], %[[WT:.*]], %[[WTS:.*]], %[[WA:.*]] = fp8.quantize %arg1 scale %arg5
// H100-SAME:   -> rowwise(tensor<128x512xf8E4M3FN>, tensor<f32>) columnwise(tensor<512x128xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
// H100:      %[[Y:.*]] = fp8.scaled_matmul %[[X]], %[[W]], %[[XS]], %[[WS]] {
// H100-NOT:    major
// H100-SAME:   accumulation = #fp8.accumulation<promoted(128)>
// H100-SAME:   -> tensor<256x128xbf16>
// H100:      %[[G:.*]], %[[GS:.*]], %[[GT:.*]], %[[GTS:.*]], %[[GA:.*]] = fp8.quantize %arg2 scale %arg6
// H100-SAME:   -> rowwise(tensor<256x128xf8E5M2>, tensor<f32>) columnwise(tensor<128x256xf8E5M2>, tensor<f32>) amax(tensor<f32>)
// H100:      %[[DX:.*]] = fp8.scaled_matmul %[[G]], %[[WT]], %[[GS]], %[[WTS]] {
// H100-NOT:    major
// H100-SAME:   (tensor<256x128xf8E5M2>, tensor<512x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x512xbf16>
// H100:      %[[DW:.*]] = fp8.scaled_matmul %[[GT]], %[[XT]], %[[GTS]], %[[XTS]] accumulate_into %arg3 {
// H100-NOT:    major
// H100-SAME:   (tensor<128x256xf8E5M2>, tensor<512x256xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<128x512xf32>) -> tensor<128x512xf32>
// H100-NOT:  fp8.quantize
// H100-NOT:  fp8.linear
// H100:      return %[[Y]], %[[XA]], %[[WA]], %[[DX]], %[[DW]], %[[GA]]

// On sm_100a per-tensor scales do not depend on the direction: one FP8 copy
// per tensor, read MN-major by dgrad (NN) and wgrad (NT).
// B200-LABEL: func.func @delayed_hybrid
// B200:      %[[X:.*]], %[[XS:.*]], %[[XA:.*]] = fp8.quantize %arg0 scale %arg4 {{.*}} -> rowwise(tensor<256x512xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
// B200:      %[[W:.*]], %[[WS:.*]], %[[WA:.*]] = fp8.quantize %arg1 scale %arg5 {{.*}} -> rowwise(tensor<128x512xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
// B200:      fp8.scaled_matmul %[[X]], %[[W]], %[[XS]], %[[WS]] {
// B200:      %[[G:.*]], %[[GS:.*]], %[[GA:.*]] = fp8.quantize %arg2 scale %arg6 {{.*}} -> rowwise(tensor<256x128xf8E5M2>, tensor<f32>) amax(tensor<f32>)
// B200:      fp8.scaled_matmul %[[G]], %[[W]], %[[GS]], %[[WS]] {
// B200-SAME:   b_major = #fp8.major<mn>
// B200-SAME:   -> tensor<256x512xbf16>
// B200:      fp8.scaled_matmul %[[G]], %[[X]], %[[GS]], %[[XS]] accumulate_into %arg3 {
// B200-SAME:   a_major = #fp8.major<mn>
// B200-SAME:   b_major = #fp8.major<mn>
// B200-NOT:  fp8.quantize
func.func @delayed_hybrid(%x: tensor<256x512xbf16>, %w: tensor<128x512xbf16>, %dy: tensor<256x128xbf16>, %main_grad: tensor<128x512xf32>,
                          %sx: tensor<f32>, %sw: tensor<f32>, %sdy: tensor<f32>)
    -> (tensor<256x128xbf16>, tensor<f32>, tensor<f32>, tensor<256x512xbf16>, tensor<128x512xf32>, tensor<f32>) {
  %y, %ax, %aw = fp8.linear %x, %w scales(%sx, %sw) {recipe = #fp8.delayed<history = 16>}
      : (tensor<256x512xbf16>, tensor<128x512xbf16>, tensor<f32>, tensor<f32>) -> (tensor<256x128xbf16>, tensor<f32>, tensor<f32>)
  %dx, %dw, %ady = fp8.linear_backward %x, %w, %dy accumulate_into %main_grad scales(%sx, %sw, %sdy) {recipe = #fp8.delayed<history = 16>}
      : (tensor<256x512xbf16>, tensor<128x512xbf16>, tensor<256x128xbf16>, tensor<128x512xf32>, tensor<f32>, tensor<f32>, tensor<f32>)
      -> (tensor<256x512xbf16>, tensor<128x512xf32>, tensor<f32>)
  return %y, %ax, %aw, %dx, %dw, %ady : tensor<256x128xbf16>, tensor<f32>, tensor<f32>, tensor<256x512xbf16>, tensor<128x512xf32>, tensor<f32>
}

// -----

// Current scaling with the e4m3 format: every tensor E4M3, no scale operands
// (each quantize computes its own amax and scale).
// H100-LABEL: func.func @current_e4m3
// H100-COUNT-3: fp8.quantize %arg{{[0-2]}} {granularity = #fp8.granularity<tensor>, recipe = #fp8.current<format = e4m3>} : tensor<{{.*}}xbf16> -> rowwise(tensor<{{.*}}xf8E4M3FN>, tensor<f32>) columnwise(tensor<{{.*}}xf8E4M3FN>, tensor<f32>)
// H100-NOT:  fp8.quantize
// B200-LABEL: func.func @current_e4m3
// B200-COUNT-3: fp8.quantize %arg{{[0-2]}} {granularity = #fp8.granularity<tensor>, recipe = #fp8.current<format = e4m3>} : tensor<{{.*}}xbf16> -> rowwise(tensor<{{.*}}xf8E4M3FN>, tensor<f32>){{$}}
// B200-NOT:  fp8.quantize
func.func @current_e4m3(%x: tensor<256x512xbf16>, %w: tensor<128x512xbf16>, %dy: tensor<256x128xbf16>)
    -> (tensor<256x128xbf16>, tensor<256x512xbf16>, tensor<128x512xf32>) {
  %y = fp8.linear %x, %w {recipe = #fp8.current<format = e4m3>}
      : (tensor<256x512xbf16>, tensor<128x512xbf16>) -> tensor<256x128xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<format = e4m3>}
      : (tensor<256x512xbf16>, tensor<128x512xbf16>, tensor<256x128xbf16>) -> (tensor<256x512xbf16>, tensor<128x512xf32>)
  return %y, %dx, %dw : tensor<256x128xbf16>, tensor<256x512xbf16>, tensor<128x512xf32>
}

// -----

// DeepSeek blockwise: 1x128 X and dY, 128x128 W. sm_90a: every GEMM TN,
// dgrad 1x128 x 128x128, wgrad 1x128 x 1x128 on the transposed copies.
// sm_100a: W quantized once (2-D tiles: the columnwise data would be the
// same), read MN-major by dgrad with its tile scales transposed; X and dY
// quantized in both directions (1-D tiles), untransposed.
// H100-LABEL: func.func @blockwise
// H100:      %[[X:.*]], %[[XS:.*]], %[[XT:.*]], %[[XTS:.*]] = fp8.quantize %arg0 {granularity = #fp8.granularity<tile 1x128>, recipe = #fp8.blockwise<>}
// H100-SAME:   -> rowwise(tensor<256x512xf8E4M3FN>, tensor<256x4xf32>) columnwise(tensor<512x256xf8E4M3FN>, tensor<512x2xf32>)
// H100:      %[[W:.*]], %[[WS:.*]], %[[WT:.*]], %[[WTS:.*]] = fp8.quantize %arg1 {granularity = #fp8.granularity<tile 128x128>, recipe = #fp8.blockwise<>}
// H100-SAME:   -> rowwise(tensor<128x512xf8E4M3FN>, tensor<1x4xf32>) columnwise(tensor<512x128xf8E4M3FN>, tensor<4x1xf32>)
// H100:      fp8.scaled_matmul %[[X]], %[[W]], %[[XS]], %[[WS]] bias %arg3 {a_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<tile 128x128>, recipe = #fp8.blockwise<>}
// H100:      %[[G:.*]], %[[GS:.*]], %[[GT:.*]], %[[GTS:.*]] = fp8.quantize %arg2 {granularity = #fp8.granularity<tile 1x128>, recipe = #fp8.blockwise<>}
// H100-SAME:   -> rowwise(tensor<256x128xf8E4M3FN>, tensor<256x1xf32>) columnwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf32>)
// H100:      fp8.scaled_matmul %[[G]], %[[WT]], %[[GS]], %[[WTS]] {a_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<tile 128x128>, recipe = #fp8.blockwise<>}
// H100:      fp8.scaled_matmul %[[GT]], %[[XT]], %[[GTS]], %[[XTS]] {a_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<tile 1x128>, recipe = #fp8.blockwise<>}
// H100-SAME:   -> tensor<128x512xf32>

// B200-LABEL: func.func @blockwise
// B200:      %[[X:.*]], %[[XS:.*]], %[[XC:.*]], %[[XCS:.*]] = fp8.quantize %arg0 {columnwise_layout = #fp8.columnwise_layout<untransposed>, granularity = #fp8.granularity<tile 1x128>
// B200-SAME:   -> rowwise(tensor<256x512xf8E4M3FN>, tensor<256x4xf32>) columnwise(tensor<256x512xf8E4M3FN>, tensor<512x2xf32>)
// B200:      %[[W:.*]], %[[WS:.*]] = fp8.quantize %arg1 {granularity = #fp8.granularity<tile 128x128>, recipe = #fp8.blockwise<>}
// B200-SAME:   -> rowwise(tensor<128x512xf8E4M3FN>, tensor<1x4xf32>){{$}}
// B200:      fp8.scaled_matmul %[[X]], %[[W]], %[[XS]], %[[WS]] bias %arg3
// B200:      %[[G:.*]], %[[GS:.*]], %[[GC:.*]], %[[GCS:.*]] = fp8.quantize %arg2 {columnwise_layout = #fp8.columnwise_layout<untransposed>
// B200:      %[[WST:.*]] = linalg.transpose ins(%[[WS]] : tensor<1x4xf32>) outs(%{{.*}} : tensor<4x1xf32>) permutation = [1, 0]
// B200:      fp8.scaled_matmul %[[G]], %[[W]], %[[GS]], %[[WST]] {
// B200-SAME:   b_major = #fp8.major<mn>
// B200:      fp8.scaled_matmul %[[GC]], %[[XC]], %[[GCS]], %[[XCS]] {
// B200-SAME:   a_major = #fp8.major<mn>
// B200-SAME:   b_major = #fp8.major<mn>
// B200-NOT:  fp8.quantize
func.func @blockwise(%x: tensor<256x512xbf16>, %w: tensor<128x512xbf16>, %dy: tensor<256x128xbf16>, %bias: tensor<128xf32>)
    -> (tensor<256x128xbf16>, tensor<256x512xbf16>, tensor<128x512xf32>) {
  %y = fp8.linear %x, %w bias %bias {recipe = #fp8.blockwise<>}
      : (tensor<256x512xbf16>, tensor<128x512xbf16>, tensor<128xf32>) -> tensor<256x128xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.blockwise<>}
      : (tensor<256x512xbf16>, tensor<128x512xbf16>, tensor<256x128xbf16>) -> (tensor<256x512xbf16>, tensor<128x512xf32>)
  return %y, %dx, %dw : tensor<256x128xbf16>, tensor<256x512xbf16>, tensor<128x512xf32>
}

// -----

// MXFP8 (sm_100a only): 1x32 blocks in both directions for every tensor,
// E8M0 scales; the columnwise scales are the transposed tensor's.
// B200-LABEL: func.func @mxfp8
// B200:      %[[X:.*]], %[[XS:.*]], %[[XC:.*]], %[[XCS:.*]] = fp8.quantize %arg0 {columnwise_layout = #fp8.columnwise_layout<untransposed>, granularity = #fp8.granularity<mx 1x32>, recipe = #fp8.mxfp8<>}
// B200-SAME:   -> rowwise(tensor<256x512xf8E4M3FN>, tensor<256x16xf8E8M0FNU>) columnwise(tensor<256x512xf8E4M3FN>, tensor<512x8xf8E8M0FNU>)
// B200:      %[[W:.*]], %[[WS:.*]], %[[WC:.*]], %[[WCS:.*]] = fp8.quantize %arg1
// B200-SAME:   -> rowwise(tensor<128x512xf8E4M3FN>, tensor<128x16xf8E8M0FNU>) columnwise(tensor<128x512xf8E4M3FN>, tensor<512x4xf8E8M0FNU>)
// B200:      fp8.scaled_matmul %[[X]], %[[W]], %[[XS]], %[[WS]] {
// B200:      %[[G:.*]], %[[GS:.*]], %[[GC:.*]], %[[GCS:.*]] = fp8.quantize %arg2
// B200:      fp8.scaled_matmul %[[G]], %[[WC]], %[[GS]], %[[WCS]] {{{.*}}b_major = #fp8.major<mn>
// B200:      fp8.scaled_matmul %[[GC]], %[[XC]], %[[GCS]], %[[XCS]] {{{.*}}a_major = #fp8.major<mn>{{.*}}b_major = #fp8.major<mn>
func.func @mxfp8(%x: tensor<256x512xbf16>, %w: tensor<128x512xbf16>, %dy: tensor<256x128xbf16>)
    -> (tensor<256x128xbf16>, tensor<256x512xbf16>, tensor<128x512xf32>) {
  // expected-error @+1 {{MXFP8 needs the block-scaled MMA of sm_100a; sm_90a has none}}
  %y = fp8.linear %x, %w {recipe = #fp8.mxfp8<>}
      : (tensor<256x512xbf16>, tensor<128x512xbf16>) -> tensor<256x128xbf16>
  // expected-error @+1 {{MXFP8 needs the block-scaled MMA of sm_100a}}
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.mxfp8<>}
      : (tensor<256x512xbf16>, tensor<128x512xbf16>, tensor<256x128xbf16>) -> (tensor<256x512xbf16>, tensor<128x512xf32>)
  return %y, %dx, %dw : tensor<256x128xbf16>, tensor<256x512xbf16>, tensor<128x512xf32>
}

// -----

// Inference: a forward alone needs only the rowwise quantizations; a weight
// shared by two layers is quantized once; a dynamic M stays dynamic.
// H100-LABEL: func.func @forward_only
// H100:      fp8.quantize %arg0 {{.*}} -> rowwise(tensor<?x512xf8E4M3FN>, tensor<?x4xf32>){{$}}
// H100:      %[[W:.*]], %[[WS:.*]] = fp8.quantize %arg1 {{.*}} -> rowwise(tensor<128x512xf8E4M3FN>, tensor<1x4xf32>){{$}}
// H100:      fp8.scaled_matmul {{.*}}, %[[W]], {{.*}}, %[[WS]] {
// H100:      fp8.quantize %arg2 {{.*}} -> rowwise(tensor<?x512xf8E4M3FN>, tensor<?x4xf32>){{$}}
// H100:      fp8.scaled_matmul {{.*}}, %[[W]], {{.*}}, %[[WS]] {
// H100-NOT:  fp8.quantize
// H100:      return
func.func @forward_only(%x0: tensor<?x512xbf16>, %w: tensor<128x512xbf16>, %x1: tensor<?x512xbf16>)
    -> (tensor<?x128xbf16>, tensor<?x128xf32>) {
  %y0 = fp8.linear %x0, %w {recipe = #fp8.blockwise<>}
      : (tensor<?x512xbf16>, tensor<128x512xbf16>) -> tensor<?x128xbf16>
  %y1 = fp8.linear %x1, %w {recipe = #fp8.blockwise<>}
      : (tensor<?x512xbf16>, tensor<128x512xbf16>) -> tensor<?x128xf32>
  return %y0, %y1 : tensor<?x128xbf16>, tensor<?x128xf32>
}

// -----

// dW in the weight's type: the wgrad GEMM writes bf16 itself (no f32 dW
// converted afterwards).
// H100-LABEL: func.func @bf16_dw
// H100:      fp8.scaled_matmul
// H100:      fp8.scaled_matmul
// H100:      fp8.scaled_matmul {{.*}}b_granularity = #fp8.granularity<tile 1x128>
// H100-SAME:   -> tensor<128x512xbf16>
// B200-LABEL: func.func @bf16_dw
// B200:      fp8.scaled_matmul
// B200:      fp8.scaled_matmul
// B200:      fp8.scaled_matmul {{.*}} -> tensor<128x512xbf16>
func.func @bf16_dw(%x: tensor<256x512xbf16>, %w: tensor<128x512xbf16>, %dy: tensor<256x128xbf16>)
    -> (tensor<256x128xbf16>, tensor<256x512xbf16>, tensor<128x512xbf16>) {
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>}
      : (tensor<256x512xbf16>, tensor<128x512xbf16>) -> tensor<256x128xbf16>
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.blockwise<>}
      : (tensor<256x512xbf16>, tensor<128x512xbf16>, tensor<256x128xbf16>) -> (tensor<256x512xbf16>, tensor<128x512xbf16>)
  return %y, %dx, %dw : tensor<256x128xbf16>, tensor<256x512xbf16>, tensor<128x512xbf16>
}

// Without fp8-attach-target there is no chip to expand for: an error at the
// first layer, without the whole module dumped.
// RUN: not fp8-opt %s -split-input-file -fp8-expand-linear 2>&1 | FileCheck %s --check-prefix=NO-TARGET
// NO-TARGET: error: no fp8.target on the module: run fp8-attach-target{chip=...} (fp8-to-ptx does) first
// NO-TARGET-NOT: see current operation

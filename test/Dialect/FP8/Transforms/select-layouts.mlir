// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-select-layouts -verify-diagnostics | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-select-layouts | FileCheck %s --check-prefix=SM100
// RUN: not fp8-opt %s -split-input-file -fp8-select-layouts 2>&1 | FileCheck %s --check-prefix=NO-TARGET
// NO-TARGET: error: no fp8.target on the module: run fp8-attach-target{chip=...} (fp8-to-ptx does) first

// An untransposed columnwise output (Blackwell's NN form) becomes the
// transposed one on sm_90a: the same values stored [C, R], read K-major.
// CHECK-LABEL: func.func @flip_untransposed_columnwise
// CHECK: %[[C:.*]], %[[CS:.*]] = fp8.quantize %arg1 {granularity = #fp8.granularity<tile 128x128>, recipe = #fp8.blockwise<>} : tensor<256x64xbf16> -> columnwise(tensor<64x256xf8E4M3FN>, tensor<1x2xf32>)
// CHECK: fp8.scaled_matmul %arg0, %[[C]], %arg2, %[[CS]] {a_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<tile 128x128>, recipe = #fp8.blockwise<>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>,
// SM100-LABEL: func.func @flip_untransposed_columnwise
// SM100: columnwise_layout = #fp8.columnwise_layout<untransposed>
// SM100: b_major = #fp8.major<mn>
func.func @flip_untransposed_columnwise(%a: tensor<128x256xf8E4M3FN>, %w: tensor<256x64xbf16>, %sa: tensor<128x2xf32>) -> tensor<128x64xbf16> {
  %wq, %ws = fp8.quantize %w {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>, columnwise_layout = #fp8.columnwise_layout<untransposed>} : tensor<256x64xbf16> -> columnwise(tensor<256x64xf8E4M3FN>, tensor<1x2xf32>)
  %0 = fp8.scaled_matmul %a, %wq, %sa, %ws {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<>} : (tensor<128x256xf8E4M3FN>, tensor<256x64xf8E4M3FN>, tensor<128x2xf32>, tensor<1x2xf32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

// The rowwise output of a per-tensor quantize used MN-major: the op makes a
// transposed columnwise output instead (same scale), and keeps the rowwise
// one only because the fprop GEMM still reads it.
// CHECK-LABEL: func.func @rowwise_tensor_to_columnwise
// CHECK: %[[R:.*]], %[[RS:.*]], %[[C:.*]], %[[CS:.*]], %[[AMAX:.*]] = fp8.quantize %arg0 scale %arg2 {{.*}} -> rowwise(tensor<256x64xf8E4M3FN>, tensor<f32>) columnwise(tensor<64x256xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
// CHECK: fp8.scaled_matmul %arg1, %[[R]], %arg4, %[[RS]] {{.*}} : (tensor<128x64xf8E4M3FN>, tensor<256x64xf8E4M3FN>,
// CHECK: fp8.scaled_matmul %arg3, %[[C]], %arg4, %[[RS]] {a_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, b_granularity = #fp8.granularity<tensor>} : (tensor<128x256xf8E5M2>, tensor<64x256xf8E4M3FN>,
// CHECK: return {{.*}}, %[[AMAX]]
func.func @rowwise_tensor_to_columnwise(%w: tensor<256x64xbf16>, %x: tensor<128x64xf8E4M3FN>, %ws_in: tensor<f32>, %dy: tensor<128x256xf8E5M2>, %s: tensor<f32>) -> (tensor<128x256xbf16>, tensor<128x64xbf16>, tensor<f32>) {
  %wq, %ws, %amax = fp8.quantize %w scale %ws_in {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<256x64xbf16>, tensor<f32> -> rowwise(tensor<256x64xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
  %y = fp8.scaled_matmul %x, %wq, %s, %ws {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x64xf8E4M3FN>, tensor<256x64xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  %dx = fp8.scaled_matmul %dy, %wq, %s, %ws {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E5M2>, tensor<256x64xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %y, %dx, %amax : tensor<128x256xbf16>, tensor<128x64xbf16>, tensor<f32>
}

// -----

// Only MN-major uses: the rowwise output disappears.
// CHECK-LABEL: func.func @rowwise_replaced
// CHECK: %[[C:.*]], %[[CS:.*]] = fp8.quantize %arg0 {{.*}} -> columnwise(tensor<128x256xf8E4M3FN>, tensor<f32>)
// CHECK-NOT: rowwise
// CHECK: fp8.scaled_matmul %[[C]], %arg1, %[[CS]], %arg2 {a_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, b_granularity = #fp8.granularity<tensor>} : (tensor<128x256xf8E4M3FN>,
func.func @rowwise_replaced(%x: tensor<256x128xbf16>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  %xq, %xs = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>} : tensor<256x128xbf16> -> rowwise(tensor<256x128xf8E4M3FN>, tensor<f32>)
  %0 = fp8.scaled_matmul %xq, %b, %xs, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, a_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<256x128xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

// Already legal: nothing changes.
// CHECK-LABEL: func.func @tn_unchanged
// CHECK: fp8.quantize %arg0 {{.*}} -> rowwise(tensor<128x256xf8E4M3FN>, tensor<f32>)
func.func @tn_unchanged(%x: tensor<128x256xbf16>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  %xq, %xs = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<f32>)
  %0 = fp8.scaled_matmul %xq, %b, %xs, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

// No producer to flip: no FP8 transpose is invented.
func.func @argument_operand(%a: tensor<256x128xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  // expected-error @+2 {{sm_90a reads FP8 MMA operands K-major only (TN), and the MN-major A cannot be made K-major: it is not produced by an fp8.quantize (no FP8 transpose is generated)}}
  // expected-note @+1 {{quantize A with a columnwise output (columnwise_layout = transposed)}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, a_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<256x128xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

// MXFP8 needs sm_100a's block-scaled MMA: rejected, not decomposed.
func.func @mx_on_hopper(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<128x8xf8E8M0FNU>, %sb: tensor<64x8xf8E8M0FNU>) -> tensor<128x64xbf16> {
  // expected-error @+2 {{MXFP8 (mx 1x32, UE8M0 scales) needs block-scaled tensor-core MMA, which sm_90a does not have}}
  // expected-note @+1 {{target sm_100a}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>, tensor<64x8xf8E8M0FNU>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

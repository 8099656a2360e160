// RUN: fp8-opt %s -canonicalize -split-input-file | FileCheck %s

// Constant folding evaluates the ops with the FP8Numerics library. The
// expected values below are worked out by hand from the recipes' rules.

// CHECK-LABEL: func.func @amax_fold
// CHECK-DAG: %[[A:.*]] = arith.constant dense<3.500000e+00> : tensor<f32>
// NaN propagates through amax.
// CHECK-DAG: %[[N:.*]] = arith.constant dense<0x7FC00000> : tensor<f32>
// CHECK-NOT: fp8.amax
// CHECK: return %[[A]], %[[N]]
func.func @amax_fold() -> (tensor<f32>, tensor<f32>) {
  %x = arith.constant dense<[[1.0, -3.5], [2.0, 0.5]]> : tensor<2x2xbf16>
  %0 = fp8.amax %x : tensor<2x2xbf16> -> tensor<f32>
  %y = arith.constant dense<[1.0, 0x7FC00000, -7.0]> : tensor<3xf32>
  %1 = fp8.amax %y : tensor<3xf32> -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}

// -----

// 448 / 3 = 149.333 (f32 RN), its inverse; pow2 keeps 2^7 = 128; an amax of 0
// gives scale 1.
// CHECK-LABEL: func.func @current_scaling_fold
// CHECK-DAG: %[[S:.*]] = arith.constant dense<149.333328> : tensor<f32>
// CHECK-DAG: %[[SI:.*]] = arith.constant dense<0.00669642864> : tensor<f32>
// CHECK-DAG: %[[P:.*]] = arith.constant dense<1.280000e+02> : tensor<f32>
// CHECK-DAG: %[[PI:.*]] = arith.constant dense<7.812500e-03> : tensor<f32>
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NOT: fp8.compute_scale
// CHECK: return %[[S]], %[[SI]], %[[P]], %[[PI]], %[[ONE]], %[[ONE]]
func.func @current_scaling_fold() -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %a = arith.constant dense<3.0> : tensor<f32>
  %s, %si = fp8.compute_scale %a {recipe = #fp8.current<>, element_type = f8E4M3FN} : tensor<f32> -> tensor<f32>, tensor<f32>
  %s2, %si2 = fp8.compute_scale %a {recipe = #fp8.current<pow2 = true>, element_type = f8E4M3FN} : tensor<f32> -> tensor<f32>, tensor<f32>
  %z = arith.constant dense<0.0> : tensor<f32>
  %s3, %si3 = fp8.compute_scale %z {recipe = #fp8.current<>, element_type = f8E5M2} : tensor<f32> -> tensor<f32>, tensor<f32>
  return %s, %si, %s2, %si2, %s3, %si3 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// Record 7 into slot 0; max over [7, 10, 224, 5] = 224; margin 1 gives
// (448 / 2) / 224 = 1. The next history rolls left (slot 1's 10 falls off
// when slot 0 is cleared): [0, 224, 5, 7]. most_recent reads slot 0 = 0, which
// keeps the previous scale 3.
// CHECK-LABEL: func.func @delayed_scaling_fold
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-DAG: %[[NEXT:.*]] = arith.constant dense<[0.000000e+00, 2.240000e+02, 5.000000e+00, 7.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[PREV:.*]] = arith.constant dense<3.000000e+00> : tensor<f32>
// CHECK-DAG: %[[NEXT2:.*]] = arith.constant dense<[0.000000e+00, 2.240000e+02, 5.000000e+00, 0.000000e+00]> : tensor<4xf32>
// CHECK-NOT: fp8.
// CHECK: return %[[ONE]], %[[ONE]], %[[NEXT]], %[[PREV]], %[[NEXT2]]
func.func @delayed_scaling_fold() -> (tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) {
  %h = arith.constant dense<[0.0, 10.0, 224.0, 5.0]> : tensor<4xf32>
  %amax = arith.constant dense<7.0> : tensor<f32>
  %prev = arith.constant dense<3.0> : tensor<f32>
  %h1 = fp8.update_amax_history %h, %amax {recipe = #fp8.delayed<history = 4>} : tensor<4xf32>, tensor<f32>
  %s, %si, %n = fp8.compute_scale %h1, %prev {recipe = #fp8.delayed<history = 4, margin = 1>, element_type = f8E4M3FN} : tensor<4xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<4xf32>
  %s2, %si2, %n2 = fp8.compute_scale %h, %prev {recipe = #fp8.delayed<history = 4, algo = most_recent>, element_type = f8E4M3FN} : tensor<4xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<4xf32>
  return %s, %si, %n, %s2, %n2 : tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>
}

// -----

// Constant weights quantize at compile time. Per-tensor scale 1: 500
// saturates to 448. Blockwise 1x128 (a tail tile of 4): amax 500, scale
// pow2(448/500) = 0.5, scale_inv 2, 250 rounds to 256. The columnwise output
// quantizes x^T: each 1-element tile gets its own power-of-two scale.
// CHECK-LABEL: func.func @quantize_fold
// CHECK-DAG: %[[Q:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 4.480000e+02, -3.000000e+00]]> : tensor<1x4xf8E4M3FN>
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-DAG: %[[AMAX:.*]] = arith.constant dense<5.000000e+02> : tensor<f32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<{{\[\[}}5.000000e-01, 1.000000e+00, 2.560000e+02, -1.500000e+00]]> : tensor<1x4xf8E4M3FN>
// CHECK-DAG: %[[BS:.*]] = arith.constant dense<2.000000e+00> : tensor<1x1xf32>
// CHECK-DAG: %[[BT:.*]] = arith.constant dense<{{\[\[}}2.560000e+02], [2.560000e+02], [2.560000e+02], [-3.840000e+02]]> : tensor<4x1xf8E4M3FN>
// CHECK-DAG: %[[BST:.*]] = arith.constant dense<{{\[\[}}3.906250e-03], [7.812500e-03], [2.000000e+00], [7.812500e-03]]> : tensor<4x1xf32>
// CHECK-NOT: fp8.quantize
// CHECK: return %[[Q]], %[[ONE]], %[[AMAX]], %[[B]], %[[BS]], %[[BT]], %[[BST]]
func.func @quantize_fold() -> (tensor<1x4xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<1x4xf8E4M3FN>, tensor<1x1xf32>, tensor<4x1xf8E4M3FN>, tensor<4x1xf32>) {
  %x = arith.constant dense<[[1.0, 2.0, 500.0, -3.0]]> : tensor<1x4xf32>
  %scale = arith.constant dense<1.0> : tensor<f32>
  %q, %s, %amax = fp8.quantize %x scale %scale {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<1x4xf32>, tensor<f32> -> rowwise(tensor<1x4xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
  %b, %bs, %bt, %bst = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<1x4xf32> -> rowwise(tensor<1x4xf8E4M3FN>, tensor<1x1xf32>) columnwise(tensor<4x1xf8E4M3FN>, tensor<4x1xf32>)
  return %q, %s, %amax, %b, %bs, %bt, %bst : tensor<1x4xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<1x4xf8E4M3FN>, tensor<1x1xf32>, tensor<4x1xf8E4M3FN>, tensor<4x1xf32>
}

// -----

// A worked example: amax 449 gives UE8M0 128 (2^1) under the
// default round-up rule and 127 (2^0) under OCP. Elements: 449 / 2 = 224.5
// rounds to 224; 449 / 1 saturates to 448.
// CHECK-LABEL: func.func @mx_fold
// CHECK-DAG: %[[Q:.*]] = arith.constant dense<2.240000e+02> : tensor<1x32xf8E4M3FN>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<2.000000e+00> : tensor<1x1xf8E8M0FNU>
// CHECK-DAG: %[[QO:.*]] = arith.constant dense<4.480000e+02> : tensor<1x32xf8E4M3FN>
// CHECK-DAG: %[[SO:.*]] = arith.constant dense<1.000000e+00> : tensor<1x1xf8E8M0FNU>
// CHECK: return %[[Q]], %[[S]], %[[QO]], %[[SO]]
func.func @mx_fold() -> (tensor<1x32xf8E4M3FN>, tensor<1x1xf8E8M0FNU>, tensor<1x32xf8E4M3FN>, tensor<1x1xf8E8M0FNU>) {
  %x = arith.constant dense<449.0> : tensor<1x32xf32>
  %q, %s = fp8.quantize %x {recipe = #fp8.mxfp8<>, granularity = #fp8.granularity<mx 1x32>} : tensor<1x32xf32> -> rowwise(tensor<1x32xf8E4M3FN>, tensor<1x1xf8E8M0FNU>)
  %q2, %s2 = fp8.quantize %x {recipe = #fp8.mxfp8<rounding = ocp>, granularity = #fp8.granularity<mx 1x32>} : tensor<1x32xf32> -> rowwise(tensor<1x32xf8E4M3FN>, tensor<1x1xf8E8M0FNU>)
  return %q, %s, %q2, %s2 : tensor<1x32xf8E4M3FN>, tensor<1x1xf8E8M0FNU>, tensor<1x32xf8E4M3FN>, tensor<1x1xf8E8M0FNU>
}

// -----

// Power-of-two blockwise scales can be stored as UE8M0.
// CHECK-LABEL: func.func @blockwise_e8m0_fold
// CHECK-DAG: arith.constant dense<2.000000e+00> : tensor<1x1xf8E8M0FNU>
// CHECK-NOT: fp8.quantize
func.func @blockwise_e8m0_fold() -> tensor<1x1xf8E8M0FNU> {
  %x = arith.constant dense<[[1.0, 2.0, 500.0, -3.0]]> : tensor<1x4xf32>
  %b, %bs = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>} : tensor<1x4xf32> -> rowwise(tensor<1x4xf8E4M3FN>, tensor<1x1xf8E8M0FNU>)
  return %bs : tensor<1x1xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func @dequantize_fold
// CHECK-DAG: arith.constant dense<{{\[\[}}2.500000e-01, -5.000000e-01, 1.120000e+02, 1.250000e-01]]> : tensor<1x4xbf16>
// CHECK-DAG: arith.constant dense<1.200000e+01> : tensor<1x32xf32>
// CHECK-NOT: fp8.dequantize
func.func @dequantize_fold() -> (tensor<1x4xbf16>, tensor<1x32xf32>) {
  %q = arith.constant dense<[[1.0, -2.0, 448.0, 0.5]]> : tensor<1x4xf8E4M3FN>
  %s = arith.constant dense<[[0.25]]> : tensor<1x1xf32>
  %0 = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 1x128>} : tensor<1x4xf8E4M3FN>, tensor<1x1xf32> -> tensor<1x4xbf16>
  %mq = arith.constant dense<3.0> : tensor<1x32xf8E5M2>
  %ms = arith.constant dense<4.0> : tensor<1x1xf8E8M0FNU>
  %1 = fp8.dequantize %mq, %ms {granularity = #fp8.granularity<mx 1x32>} : tensor<1x32xf8E5M2>, tensor<1x1xf8E8M0FNU> -> tensor<1x32xf32>
  return %0, %1 : tensor<1x4xbf16>, tensor<1x32xf32>
}

// -----

// A lossy quantize/dequantize pair is never folded away.
// CHECK-LABEL: func.func @no_qdq_fold
// CHECK: %[[Q:.*]], %[[S:.*]] = fp8.quantize %arg0
// CHECK: %[[D:.*]] = fp8.dequantize %[[Q]], %[[S]]
// CHECK: return %[[D]]
func.func @no_qdq_fold(%x: tensor<128x256xbf16>) -> tensor<128x256xbf16> {
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf32>)
  %d = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xf8E4M3FN>, tensor<128x2xf32> -> tensor<128x256xbf16>
  return %d : tensor<128x256xbf16>
}

// -----

// Non-constant operands do not fold.
// CHECK-LABEL: func.func @no_fold_dynamic
// CHECK: fp8.amax
// CHECK: fp8.compute_scale
// CHECK: fp8.update_amax_history
func.func @no_fold_dynamic(%x: tensor<4xf32>, %h: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %a = fp8.amax %x : tensor<4xf32> -> tensor<f32>
  %s, %si = fp8.compute_scale %a {recipe = #fp8.current<>, element_type = f8E4M3FN} : tensor<f32> -> tensor<f32>, tensor<f32>
  %h1 = fp8.update_amax_history %h, %a {recipe = #fp8.delayed<history = 4>} : tensor<4xf32>, tensor<f32>
  return %s, %h1 : tensor<f32>, tensor<4xf32>
}

// -----

// Unused outputs of fp8.quantize are dropped.
// CHECK-LABEL: func.func @drop_unused_columnwise
// CHECK: fp8.quantize %arg0 {{.*}} -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf32>){{$}}
func.func @drop_unused_columnwise(%x: tensor<128x256xbf16>) -> (tensor<128x256xf8E4M3FN>, tensor<128x2xf32>) {
  %q, %s, %qt, %st = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf32>) columnwise(tensor<256x128xf8E4M3FN>, tensor<256x1xf32>)
  return %q, %s : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>
}

// CHECK-LABEL: func.func @drop_unused_rowwise_and_amax
// CHECK: fp8.quantize %arg0 scale %arg1 {{.*}} -> columnwise(tensor<256x128xf8E4M3FN>, tensor<f32>){{$}}
func.func @drop_unused_rowwise_and_amax(%x: tensor<128x256xbf16>, %scale: tensor<f32>) -> tensor<256x128xf8E4M3FN> {
  %q, %s, %qt, %st, %amax = fp8.quantize %x scale %scale {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<128x256xbf16>, tensor<f32> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<f32>) columnwise(tensor<256x128xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
  return %qt : tensor<256x128xf8E4M3FN>
}

// Only the scale_inv of the rowwise pair is used: the pair is kept.
// CHECK-LABEL: func.func @keep_pair_with_one_use
// CHECK: fp8.quantize %arg0 {{.*}} -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf32>){{$}}
func.func @keep_pair_with_one_use(%x: tensor<128x256xbf16>) -> tensor<128x2xf32> {
  %q, %s, %qt, %st = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf32>) columnwise(tensor<256x128xf8E4M3FN>, tensor<256x1xf32>)
  return %s : tensor<128x2xf32>
}

// A quantize with no used result is dead.
// CHECK-LABEL: func.func @dead_quantize
// CHECK-NOT: fp8.quantize
func.func @dead_quantize(%x: tensor<128x256xbf16>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf32>)
  return
}

// RUN: fp8-opt %s -fp8-decompose-quantize | FileCheck %s

// CHECK-LABEL: func.func @fused_current_scaling
// CHECK-SAME: (%[[X:.*]]: tensor<256x512xbf16>)
// CHECK: %[[AMAX:.*]] = fp8.amax %[[X]] : tensor<256x512xbf16> -> tensor<f32>
// CHECK: %[[S:.*]], %{{.*}} = fp8.compute_scale %[[AMAX]] {element_type = f8E5M2, recipe = #fp8.current<epsilon = 9.99999996E-13>}
// CHECK: %[[Q:.*]], %[[SI:.*]], %[[QT:.*]], %[[SIT:.*]] = fp8.quantize %[[X]] scale %[[S]] {granularity = #fp8.granularity<tensor>, recipe = #fp8.current<epsilon = 9.99999996E-13>} : tensor<256x512xbf16>, tensor<f32> -> rowwise(tensor<256x512xf8E5M2>, tensor<f32>) columnwise(tensor<512x256xf8E5M2>, tensor<f32>){{$}}
// CHECK: return %[[Q]], %[[SI]], %[[QT]], %[[SIT]], %[[AMAX]]
func.func @fused_current_scaling(%x: tensor<256x512xbf16>) -> (tensor<256x512xf8E5M2>, tensor<f32>, tensor<512x256xf8E5M2>, tensor<f32>, tensor<f32>) {
  %q, %s, %qt, %st, %amax = fp8.quantize %x {recipe = #fp8.current<epsilon = 1.0e-12>, granularity = #fp8.granularity<tensor>} : tensor<256x512xbf16> -> rowwise(tensor<256x512xf8E5M2>, tensor<f32>) columnwise(tensor<512x256xf8E5M2>, tensor<f32>) amax(tensor<f32>)
  return %q, %s, %qt, %st, %amax : tensor<256x512xf8E5M2>, tensor<f32>, tensor<512x256xf8E5M2>, tensor<f32>, tensor<f32>
}

// Already two-pass, per-row, or another recipe: untouched.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: fp8.amax
// CHECK-COUNT-3: fp8.quantize
func.func @untouched(%x: tensor<256x512xbf16>, %scale: tensor<f32>) -> (tensor<256x512xf8E4M3FN>, tensor<256x512xf8E4M3FN>, tensor<256x512xf8E4M3FN>) {
  %q0, %s0 = fp8.quantize %x scale %scale {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>} : tensor<256x512xbf16>, tensor<f32> -> rowwise(tensor<256x512xf8E4M3FN>, tensor<f32>)
  %q1, %s1 = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<row>} : tensor<256x512xbf16> -> rowwise(tensor<256x512xf8E4M3FN>, tensor<256x1xf32>)
  %q2, %s2 = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<256x512xbf16> -> rowwise(tensor<256x512xf8E4M3FN>, tensor<256x4xf32>)
  return %q0, %q1, %q2 : tensor<256x512xf8E4M3FN>, tensor<256x512xf8E4M3FN>, tensor<256x512xf8E4M3FN>
}

// The decomposition is exact: on constants both forms fold to the same bits.
// RUN: fp8-opt %s -canonicalize | FileCheck %s --check-prefix=FOLD
// RUN: fp8-opt %s -fp8-decompose-quantize -canonicalize | FileCheck %s --check-prefix=FOLD
// FOLD-LABEL: func.func @constant_equivalence
// FOLD-DAG: arith.constant dense<{{\[}}8.750000e-01, 2.560000e+02, -4.480000e+02, 1.280000e+02]> : tensor<4xf8E4M3FN>
// FOLD-DAG: arith.constant dense<0.111607142> : tensor<f32>
func.func @constant_equivalence() -> (tensor<4xf8E4M3FN>, tensor<f32>) {
  %x = arith.constant dense<[0.1, 30.0, -50.0, 14.0]> : tensor<4xf32>
  %q, %s = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>} : tensor<4xf32> -> rowwise(tensor<4xf8E4M3FN>, tensor<f32>)
  return %q, %s : tensor<4xf8E4M3FN>, tensor<f32>
}

// A row-granularity quantize with both outputs: one per output.
// CHECK-LABEL: func.func @row_granularity_both_outputs
// CHECK: %[[Q:.*]], %[[S:.*]] = fp8.quantize %{{.*}} {granularity = #fp8.granularity<row>, recipe = #fp8.current<>} : tensor<?x256xbf16> -> rowwise(tensor<?x256xf8E4M3FN>, tensor<?x1xf32>)
// CHECK: %[[QT:.*]], %[[ST:.*]] = fp8.quantize %{{.*}} {granularity = #fp8.granularity<row>, recipe = #fp8.current<>} : tensor<?x256xbf16> -> columnwise(tensor<256x?xf8E4M3FN>, tensor<256x1xf32>)
// CHECK: return %[[Q]], %[[S]], %[[QT]], %[[ST]]
func.func @row_granularity_both_outputs(%x: tensor<?x256xbf16>) -> (tensor<?x256xf8E4M3FN>, tensor<?x1xf32>, tensor<256x?xf8E4M3FN>, tensor<256x1xf32>) {
  %q, %s, %qt, %st = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<row>}
      : tensor<?x256xbf16> -> rowwise(tensor<?x256xf8E4M3FN>, tensor<?x1xf32>) columnwise(tensor<256x?xf8E4M3FN>, tensor<256x1xf32>)
  return %q, %s, %qt, %st : tensor<?x256xf8E4M3FN>, tensor<?x1xf32>, tensor<256x?xf8E4M3FN>, tensor<256x1xf32>
}

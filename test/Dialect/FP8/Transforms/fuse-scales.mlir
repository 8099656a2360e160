// RUN: fp8-opt %s -split-input-file -fp8-fuse-scales | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-fuse-scales=fast-accumulation=true | FileCheck %s --check-prefix=FAST

#map_a = affine_map<(m, n, k) -> (m, k)>
#map_bt = affine_map<(m, n, k) -> (n, k)>
#map_c = affine_map<(m, n, k) -> (m, n)>

// Q/DQ with a transposed weight ([N, K]): a TN scaled_matmul, per-tensor
// scales, promoted accumulation by default.
// CHECK-LABEL: func.func @qdq_tn_tensor
// CHECK-SAME: (%[[A:.*]]: tensor<128x256xf8E4M3FN>, %[[SA:.*]]: tensor<f32>, %[[B:.*]]: tensor<64x256xf8E4M3FN>, %[[SB:.*]]: tensor<f32>)
// CHECK-NOT: fp8.dequantize
// CHECK-NOT: linalg.matmul
// CHECK: %[[R:.*]] = fp8.scaled_matmul %[[A]], %[[B]], %[[SA]], %[[SB]] {a_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<tensor>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
// CHECK-NEXT: return %[[R]]
// FAST-LABEL: func.func @qdq_tn_tensor
// FAST: accumulation = #fp8.accumulation<fast>
func.func @qdq_tn_tensor(%a: tensor<128x256xf8E4M3FN>, %sa: tensor<f32>, %b: tensor<64x256xf8E4M3FN>, %sb: tensor<f32>) -> tensor<128x64xbf16> {
  %da = fp8.dequantize %a, %sa {granularity = #fp8.granularity<tensor>} : tensor<128x256xf8E4M3FN>, tensor<f32> -> tensor<128x256xbf16>
  %db = fp8.dequantize %b, %sb {granularity = #fp8.granularity<tensor>} : tensor<64x256xf8E4M3FN>, tensor<f32> -> tensor<64x256xbf16>
  %zero = arith.constant 0.0 : bf16
  %empty = tensor.empty() : tensor<128x64xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%empty : tensor<128x64xbf16>) -> tensor<128x64xbf16>
  %r = linalg.matmul indexing_maps = [#map_a, #map_bt, #map_c] ins(%da, %db : tensor<128x256xbf16>, tensor<64x256xbf16>) outs(%init : tensor<128x64xbf16>) -> tensor<128x64xbf16>
  return %r : tensor<128x64xbf16>
}

// -----

// The default matmul reads B as [K, N]: an MN-major B (per-tensor scale).
// CHECK-LABEL: func.func @qdq_nn_tensor
// CHECK: fp8.scaled_matmul %arg0, %arg2, %arg1, %arg3 {a_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<tensor>, b_major = #fp8.major<mn>} : (tensor<128x256xf8E4M3FN>, tensor<256x64xf8E4M3FN>, tensor<128x1xf32>, tensor<f32>) -> tensor<128x64xf32>
func.func @qdq_nn_tensor(%a: tensor<128x256xf8E4M3FN>, %sa: tensor<128x1xf32>, %b: tensor<256x64xf8E4M3FN>, %sb: tensor<f32>) -> tensor<128x64xf32> {
  %da = fp8.dequantize %a, %sa {granularity = #fp8.granularity<row>} : tensor<128x256xf8E4M3FN>, tensor<128x1xf32> -> tensor<128x256xf32>
  %db = fp8.dequantize %b, %sb {granularity = #fp8.granularity<tensor>} : tensor<256x64xf8E4M3FN>, tensor<f32> -> tensor<256x64xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<128x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<128x64xf32>) -> tensor<128x64xf32>
  %r = linalg.matmul ins(%da, %db : tensor<128x256xf32>, tensor<256x64xf32>) outs(%init : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %r : tensor<128x64xf32>
}

// -----

#map_a = affine_map<(m, n, k) -> (m, k)>
#map_bt = affine_map<(m, n, k) -> (n, k)>
#map_c = affine_map<(m, n, k) -> (m, n)>

// Blockwise 1x128 x 128x128 (DeepSeek-V3): promoted every 128 K.
// CHECK-LABEL: func.func @qdq_blockwise
// CHECK: fp8.scaled_matmul %arg0, %arg2, %arg1, %arg3 {a_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<tile 128x128>}
// FAST-LABEL: func.func @qdq_blockwise
// FAST: accumulation = #fp8.accumulation<promoted(128)>
func.func @qdq_blockwise(%a: tensor<128x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %b: tensor<256x256xf8E4M3FN>, %sb: tensor<2x2xf32>) -> tensor<128x256xbf16> {
  %da = fp8.dequantize %a, %sa {granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xf8E4M3FN>, tensor<128x2xf32> -> tensor<128x256xbf16>
  %db = fp8.dequantize %b, %sb {granularity = #fp8.granularity<tile 128x128>} : tensor<256x256xf8E4M3FN>, tensor<2x2xf32> -> tensor<256x256xbf16>
  %zero = arith.constant 0.0 : bf16
  %empty = tensor.empty() : tensor<128x256xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%empty : tensor<128x256xbf16>) -> tensor<128x256xbf16>
  %r = linalg.matmul indexing_maps = [#map_a, #map_bt, #map_c] ins(%da, %db : tensor<128x256xbf16>, tensor<256x256xbf16>) outs(%init : tensor<128x256xbf16>) -> tensor<128x256xbf16>
  return %r : tensor<128x256xbf16>
}

// -----

// Not fused: block scales of an MN-major B run across N, not K.
// CHECK-LABEL: func.func @mn_major_block_scales
// CHECK: linalg.matmul
// CHECK-NOT: fp8.scaled_matmul
func.func @mn_major_block_scales(%a: tensor<128x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %b: tensor<256x128xf8E4M3FN>, %sb: tensor<256x1xf32>) -> tensor<128x128xbf16> {
  %da = fp8.dequantize %a, %sa {granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xf8E4M3FN>, tensor<128x2xf32> -> tensor<128x256xbf16>
  %db = fp8.dequantize %b, %sb {granularity = #fp8.granularity<tile 1x128>} : tensor<256x128xf8E4M3FN>, tensor<256x1xf32> -> tensor<256x128xbf16>
  %zero = arith.constant 0.0 : bf16
  %empty = tensor.empty() : tensor<128x128xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%empty : tensor<128x128xbf16>) -> tensor<128x128xbf16>
  %r = linalg.matmul ins(%da, %db : tensor<128x256xbf16>, tensor<256x128xbf16>) outs(%init : tensor<128x128xbf16>) -> tensor<128x128xbf16>
  return %r : tensor<128x128xbf16>
}

// -----

// An f32 matmul into a non-zero tensor: accumulate-into-C (wgrad).
// CHECK-LABEL: func.func @accumulate_f32
// CHECK: fp8.scaled_matmul %arg0, %arg1, %arg2, %arg2 accumulate_into %arg3 {a_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<tensor>, b_major = #fp8.major<mn>} : (tensor<128x256xf8E4M3FN>, tensor<256x64xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<128x64xf32>) -> tensor<128x64xf32>
func.func @accumulate_f32(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x64xf8E4M3FN>, %s: tensor<f32>, %c: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %da = fp8.dequantize %a, %s {granularity = #fp8.granularity<tensor>} : tensor<128x256xf8E4M3FN>, tensor<f32> -> tensor<128x256xf32>
  %db = fp8.dequantize %b, %s {granularity = #fp8.granularity<tensor>} : tensor<256x64xf8E4M3FN>, tensor<f32> -> tensor<256x64xf32>
  %r = linalg.matmul ins(%da, %db : tensor<128x256xf32>, tensor<256x64xf32>) outs(%c : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %r : tensor<128x64xf32>
}

// -----

// Not fused: a bf16 matmul into a non-zero tensor (scaled_matmul accumulates
// into f32 only).
// CHECK-LABEL: func.func @nonzero_bf16_init
// CHECK: linalg.matmul
// CHECK-NOT: fp8.scaled_matmul
func.func @nonzero_bf16_init(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x64xf8E4M3FN>, %s: tensor<f32>, %c: tensor<128x64xbf16>) -> tensor<128x64xbf16> {
  %da = fp8.dequantize %a, %s {granularity = #fp8.granularity<tensor>} : tensor<128x256xf8E4M3FN>, tensor<f32> -> tensor<128x256xbf16>
  %db = fp8.dequantize %b, %s {granularity = #fp8.granularity<tensor>} : tensor<256x64xf8E4M3FN>, tensor<f32> -> tensor<256x64xbf16>
  %r = linalg.matmul ins(%da, %db : tensor<128x256xbf16>, tensor<256x64xbf16>) outs(%c : tensor<128x64xbf16>) -> tensor<128x64xbf16>
  return %r : tensor<128x64xbf16>
}

// -----

// Not fused: only one side is FP8.
// CHECK-LABEL: func.func @one_side_fp8
// CHECK: linalg.matmul
// CHECK-NOT: fp8.scaled_matmul
func.func @one_side_fp8(%a: tensor<128x256xf8E4M3FN>, %s: tensor<f32>, %b: tensor<256x64xbf16>) -> tensor<128x64xbf16> {
  %da = fp8.dequantize %a, %s {granularity = #fp8.granularity<tensor>} : tensor<128x256xf8E4M3FN>, tensor<f32> -> tensor<128x256xbf16>
  %zero = arith.constant 0.0 : bf16
  %empty = tensor.empty() : tensor<128x64xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%empty : tensor<128x64xbf16>) -> tensor<128x64xbf16>
  %r = linalg.matmul ins(%da, %b : tensor<128x256xbf16>, tensor<256x64xbf16>) outs(%init : tensor<128x64xbf16>) -> tensor<128x64xbf16>
  return %r : tensor<128x64xbf16>
}

// -----

#map_a = affine_map<(m, n, k) -> (m, k)>
#map_bt = affine_map<(m, n, k) -> (n, k)>
#map_c = affine_map<(m, n, k) -> (m, n)>

// A whole linear layer in Q/DQ form: f32 matmul, + bias[N], cast to bf16.
// Everything lands in one scaled_matmul; nothing is left behind.
// CHECK-LABEL: func.func @qdq_bias_cast
// CHECK-NEXT: %[[R:.*]] = fp8.scaled_matmul %arg0, %arg2, %arg1, %arg3 bias %arg4 {{.*}} : (tensor<?x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<?x1xf32>, tensor<64x1xf32>, tensor<64xf32>) -> tensor<?x64xbf16>
// CHECK-NEXT: return %[[R]]
func.func @qdq_bias_cast(%a: tensor<?x256xf8E4M3FN>, %sa: tensor<?x1xf32>, %b: tensor<64x256xf8E4M3FN>, %sb: tensor<64x1xf32>, %bias: tensor<64xf32>) -> tensor<?x64xbf16> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x256xf8E4M3FN>
  %da = fp8.dequantize %a, %sa {granularity = #fp8.granularity<row>} : tensor<?x256xf8E4M3FN>, tensor<?x1xf32> -> tensor<?x256xf32>
  %db = fp8.dequantize %b, %sb {granularity = #fp8.granularity<row>} : tensor<64x256xf8E4M3FN>, tensor<64x1xf32> -> tensor<64x256xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%m) : tensor<?x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mm = linalg.matmul indexing_maps = [#map_a, #map_bt, #map_c] ins(%da, %db : tensor<?x256xf32>, tensor<64x256xf32>) outs(%init : tensor<?x64xf32>) -> tensor<?x64xf32>
  %bempty = tensor.empty(%m) : tensor<?x64xf32>
  %bb = linalg.broadcast ins(%bias : tensor<64xf32>) outs(%bempty : tensor<?x64xf32>) dimensions = [0]
  %y = arith.addf %mm, %bb : tensor<?x64xf32>
  %yb = arith.truncf %y : tensor<?x64xf32> to tensor<?x64xbf16>
  return %yb : tensor<?x64xbf16>
}

// -----

// Not fused: the broadcast runs along N (a per-row term, not a bias), and a
// truncation toward zero is not the kernel's rounding.
// CHECK-LABEL: func.func @no_epilogue_fusion
// CHECK: fp8.scaled_matmul {{.*}} -> tensor<128x64xf32>
// CHECK: linalg.broadcast
// CHECK: arith.addf
// CHECK: arith.truncf
func.func @no_epilogue_fusion(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>, %v: tensor<128xf32>) -> tensor<128x64xbf16> {
  %mm = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>
  %e = tensor.empty() : tensor<128x64xf32>
  %vb = linalg.broadcast ins(%v : tensor<128xf32>) outs(%e : tensor<128x64xf32>) dimensions = [1]
  %y = arith.addf %mm, %vb : tensor<128x64xf32>
  %yb = arith.truncf %y toward_zero : tensor<128x64xf32> to tensor<128x64xbf16>
  return %yb : tensor<128x64xbf16>
}

// -----

// Not fused: the f32 result has another user besides the cast.
// CHECK-LABEL: func.func @cast_with_other_user
// CHECK: fp8.scaled_matmul {{.*}} -> tensor<128x64xf32>
// CHECK: arith.truncf
func.func @cast_with_other_user(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) -> (tensor<128x64xbf16>, tensor<128x64xf32>) {
  %mm = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>
  %yb = arith.truncf %mm : tensor<128x64xf32> to tensor<128x64xbf16>
  return %yb, %mm : tensor<128x64xbf16>, tensor<128x64xf32>
}

// -----

// Activations: a linalg.generic applying SiLU / GELU / tanh-GELU to each
// element of an f32 scaled_matmul result (after its bias) becomes the op's
// activation, together with an RNE cast in the same body; products match in
// any order and association.
#id = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @silu_div
// CHECK-NOT: linalg.generic
// CHECK: %[[R:.*]] = fp8.scaled_matmul %arg0, %arg1, %arg2, %arg3 bias %arg4 {{.*}}activation = #fp8.activation<silu>{{.*}} -> tensor<128x64xbf16>
// CHECK-NEXT: return %[[R]]
func.func @silu_div(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>, %bias: tensor<64xf32>) -> tensor<128x64xbf16> {
  %mm = fp8.scaled_matmul %a, %b, %sa, %sb bias %bias {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<64xf32>) -> tensor<128x64xf32>
  %e = tensor.empty() : tensor<128x64xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<128x64xf32>) outs(%e : tensor<128x64xbf16>) {
  ^bb0(%x: f32, %out: bf16):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %x : f32
    %ex = math.exp %n : f32
    %d = arith.addf %one, %ex : f32
    %s = arith.divf %x, %d : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<128x64xbf16>
  return %y : tensor<128x64xbf16>
}

// -----

#id = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @silu_sigmoid
// CHECK: fp8.scaled_matmul {{.*}}activation = #fp8.activation<silu>{{.*}} -> tensor<128x64xf32>
// CHECK-NOT: linalg.generic
func.func @silu_sigmoid(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>) -> tensor<128x64xf32> {
  %mm = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<128x64xf32>) outs(%mm : tensor<128x64xf32>) {
  ^bb0(%x: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %m1 = arith.constant -1.0 : f32
    %n = arith.mulf %m1, %x : f32
    %ex = math.exp %n : f32
    %d = arith.addf %ex, %one : f32
    %r = arith.divf %one, %d : f32
    %s = arith.mulf %r, %x : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// -----

#id = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @gelu_erf
// CHECK: fp8.scaled_matmul {{.*}}activation = #fp8.activation<gelu>{{.*}} -> tensor<128x64xf16>
// CHECK-NOT: linalg.generic
func.func @gelu_erf(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>) -> tensor<128x64xf16> {
  %mm = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>
  %e = tensor.empty() : tensor<128x64xf16>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<128x64xf32>) outs(%e : tensor<128x64xf16>) {
  ^bb0(%x: f32, %out: f16):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %sqrt2 = arith.constant 1.41421354 : f32
    %z = arith.divf %x, %sqrt2 : f32
    %erf = math.erf %z : f32
    %p = arith.addf %erf, %one : f32
    %hx = arith.mulf %half, %x : f32
    %g = arith.mulf %hx, %p : f32
    %t = arith.truncf %g : f32 to f16
    linalg.yield %t : f16
  } -> tensor<128x64xf16>
  return %y : tensor<128x64xf16>
}

// -----

#id = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @gelu_tanh
// CHECK: fp8.scaled_matmul {{.*}}activation = #fp8.activation<gelu_tanh>{{.*}} -> tensor<128x64xbf16>
// CHECK-NOT: linalg.generic
func.func @gelu_tanh(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>) -> tensor<128x64xbf16> {
  %mm = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>
  %e = tensor.empty() : tensor<128x64xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<128x64xf32>) outs(%e : tensor<128x64xbf16>) {
  ^bb0(%x: f32, %out: bf16):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %k0 = arith.constant 0.797884583 : f32
    %k1 = arith.constant 0.044715 : f32
    %x2 = arith.mulf %x, %x : f32
    %x3 = arith.mulf %x2, %x : f32
    %c3 = arith.mulf %k1, %x3 : f32
    %in = arith.addf %x, %c3 : f32
    %u = arith.mulf %k0, %in : f32
    %th = math.tanh %u : f32
    %p = arith.addf %one, %th : f32
    %xp = arith.mulf %x, %p : f32
    %g = arith.mulf %xp, %half : f32
    %t = arith.truncf %g : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<128x64xbf16>
  return %y : tensor<128x64xbf16>
}

// -----

// Not activations the kernels implement: a wrong constant (0.7 for
// 1/sqrt(2)), the GELU of another value, and an activation after
// accumulate_into (it would apply to C + AB).
#id = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @not_fused
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: activation
func.func @not_fused(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>, %c: tensor<128x64xf32>) -> (tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>) {
  %mm0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>
  %y0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%mm0 : tensor<128x64xf32>) outs(%c : tensor<128x64xf32>) {
  ^bb0(%x: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %k = arith.constant 0.7 : f32
    %z = arith.mulf %x, %k : f32
    %erf = math.erf %z : f32
    %p = arith.addf %erf, %one : f32
    %hx = arith.mulf %half, %x : f32
    %g = arith.mulf %hx, %p : f32
    linalg.yield %g : f32
  } -> tensor<128x64xf32>
  %mm1 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>
  %y1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%mm1 : tensor<128x64xf32>) outs(%c : tensor<128x64xf32>) {
  ^bb0(%x: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %out : f32
    %ex = math.exp %n : f32
    %d = arith.addf %one, %ex : f32
    %s = arith.divf %x, %d : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  %mm2 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<128x64xf32>) -> tensor<128x64xf32>
  %y2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%mm2 : tensor<128x64xf32>) outs(%c : tensor<128x64xf32>) {
  ^bb0(%x: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %x : f32
    %ex = math.exp %n : f32
    %d = arith.addf %one, %ex : f32
    %s = arith.divf %x, %d : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  return %y0, %y1, %y2 : tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>
}

// -----

// The output amax (current scaling of the next layer): fp8.amax of a
// scaled_matmul result becomes the op's amax result, computed by the
// epilogue as it stores D; D keeps its other users. Fused after the bias and
// the cast it sees (the amax of the rounded bf16 D); an amax of the f32 D
// that another op then rounds stops the cast from fusing.
// CHECK-LABEL: func.func @output_amax
// CHECK: %[[D:.*]], %[[A:.*]] = fp8.scaled_matmul {{.*}} bias %arg4 {{.*}} -> (tensor<128x64xbf16>, tensor<f32>)
// CHECK-NOT: fp8.amax
// CHECK: return %[[D]], %[[A]]
// CHECK-LABEL: func.func @amax_before_cast
// CHECK: %[[D:.*]], %{{.*}} = fp8.scaled_matmul {{.*}} -> (tensor<128x64xf32>, tensor<f32>)
// CHECK: arith.truncf %[[D]] :
#bias_map = affine_map<(m, n) -> (n)>
func.func @output_amax(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>, %bias: tensor<64xf32>) -> (tensor<128x64xbf16>, tensor<f32>) {
  %mm = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>
  %e = tensor.empty() : tensor<128x64xf32>
  %bb = linalg.broadcast ins(%bias : tensor<64xf32>) outs(%e : tensor<128x64xf32>) dimensions = [0]
  %y = arith.addf %mm, %bb : tensor<128x64xf32>
  %yb = arith.truncf %y : tensor<128x64xf32> to tensor<128x64xbf16>
  %amax = fp8.amax %yb : tensor<128x64xbf16> -> tensor<f32>
  return %yb, %amax : tensor<128x64xbf16>, tensor<f32>
}
func.func @amax_before_cast(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>) -> (tensor<128x64xbf16>, tensor<f32>) {
  %mm = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>
  %amax = fp8.amax %mm : tensor<128x64xf32> -> tensor<f32>
  %yb = arith.truncf %mm : tensor<128x64xf32> to tensor<128x64xbf16>
  return %yb, %amax : tensor<128x64xbf16>, tensor<f32>
}

// -----

// Scale multiplications after the matmul: a per-row vector (along N), a
// per-column vector (along M) and a scalar fold into A's and B's epilogue
// scales (tensor -> row granularity), then the bias and the cast: one op,
// no separate scale, bias or cast ops left.
// CHECK-LABEL: func.func @output_scales
// CHECK-SAME: (%[[A:.*]]: tensor<128x256xf8E4M3FN>, %[[B:.*]]: tensor<64x256xf8E4M3FN>, %[[SA:.*]]: tensor<f32>, %[[SB:.*]]: tensor<f32>, %[[R:.*]]: tensor<128xf32>, %[[C:.*]]: tensor<64xf32>, %[[ALPHA:.*]]: tensor<f32>, %[[BIAS:.*]]: tensor<64xf32>)
// CHECK-DAG: %[[SA1:.*]] = linalg.generic {{.*}} ins(%[[SA]], %[[R]] : tensor<f32>, tensor<128xf32>) outs(%{{.*}} : tensor<128x1xf32>)
// CHECK-DAG: %[[SB1:.*]] = linalg.generic {{.*}} ins(%[[SB]], %[[C]] : tensor<f32>, tensor<64xf32>) outs(%{{.*}} : tensor<64x1xf32>)
// CHECK-DAG: %[[SA2:.*]] = linalg.generic {{.*}} ins(%[[SA1]], %[[ALPHA]] : tensor<128x1xf32>, tensor<f32>) outs(%{{.*}} : tensor<128x1xf32>)
// CHECK: %[[D:.*]] = fp8.scaled_matmul %[[A]], %[[B]], %[[SA2]], %[[SB1]] bias %[[BIAS]] {a_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>, b_granularity = #fp8.granularity<row>} : {{.*}} -> tensor<128x64xbf16>
// CHECK-NOT: arith.mulf
// CHECK-NOT: arith.addf
// CHECK: return %[[D]]
// CHECK-LABEL: func.func @scale_after_bias
// CHECK: fp8.scaled_matmul {{.*}} bias
// CHECK: arith.mulf
func.func @output_scales(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>, %r: tensor<128xf32>, %c: tensor<64xf32>, %alpha: tensor<f32>, %bias: tensor<64xf32>) -> tensor<128x64xbf16> {
  %mm = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>
  %e = tensor.empty() : tensor<128x64xf32>
  %rb = linalg.broadcast ins(%r : tensor<128xf32>) outs(%e : tensor<128x64xf32>) dimensions = [1]
  %cb = linalg.broadcast ins(%c : tensor<64xf32>) outs(%e : tensor<128x64xf32>) dimensions = [0]
  %ab = linalg.broadcast ins(%alpha : tensor<f32>) outs(%e : tensor<128x64xf32>) dimensions = [0, 1]
  %bb = linalg.broadcast ins(%bias : tensor<64xf32>) outs(%e : tensor<128x64xf32>) dimensions = [0]
  %y0 = arith.mulf %mm, %rb : tensor<128x64xf32>
  %y1 = arith.mulf %cb, %y0 : tensor<128x64xf32>
  %y2 = arith.mulf %y1, %ab : tensor<128x64xf32>
  %y3 = arith.addf %y2, %bb : tensor<128x64xf32>
  %y4 = arith.truncf %y3 : tensor<128x64xf32> to tensor<128x64xbf16>
  return %y4 : tensor<128x64xbf16>
}
func.func @scale_after_bias(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>, %alpha: tensor<f32>, %bias: tensor<64xf32>) -> tensor<128x64xf32> {
  %mm = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xf32>
  %e = tensor.empty() : tensor<128x64xf32>
  %bb = linalg.broadcast ins(%bias : tensor<64xf32>) outs(%e : tensor<128x64xf32>) dimensions = [0]
  %ab = linalg.broadcast ins(%alpha : tensor<f32>) outs(%e : tensor<128x64xf32>) dimensions = [0, 1]
  %y0 = arith.addf %mm, %bb : tensor<128x64xf32>
  %y1 = arith.mulf %y0, %ab : tensor<128x64xf32>
  return %y1 : tensor<128x64xf32>
}

// RUN: fp8-opt %s -split-input-file -fp8-fuse-scales | FileCheck %s

// The next layer's quantization of an f32 GEMM result folds into the GEMM's
// FP8 result: 1x128 blocks (DeepSeek-V3's activation quantization), after
// a bias; the quantize's scale_inv is the op's second result.
// CHECK-LABEL: func.func @blockwise_after_bias
// CHECK: %[[D:.*]], %[[S:.*]] = fp8.scaled_matmul %arg0, %arg1, %arg2, %arg3 bias %arg4 {{{.*}}result_granularity = #fp8.granularity<tile 1x128>, result_recipe = #fp8.blockwise<>}
// CHECK-SAME: -> (tensor<256x512xf8E4M3FN>, tensor<256x4xf32>)
// CHECK-NOT: fp8.quantize
// CHECK: return %[[D]], %[[S]]
func.func @blockwise_after_bias(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>, %bias: tensor<512xf32>) -> (tensor<256x512xf8E4M3FN>, tensor<256x4xf32>) {
  %mm = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x512xf32>
  %e = tensor.empty() : tensor<256x512xf32>
  %bb = linalg.broadcast ins(%bias : tensor<512xf32>) outs(%e : tensor<256x512xf32>) dimensions = [0]
  %y = arith.addf %mm, %bb : tensor<256x512xf32>
  %q, %s = fp8.quantize %y {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<256x512xf32> -> rowwise(tensor<256x512xf8E4M3FN>, tensor<256x4xf32>)
  return %q, %s : tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
}

// -----

// Delayed scaling: the quantize's scale becomes result_scale and its amax
// (of its f32 input) the op's amax.
// CHECK-LABEL: func.func @delayed_with_amax
// CHECK: %[[D:.*]], %[[S:.*]], %[[A:.*]] = fp8.scaled_matmul %arg0, %arg1, %arg2, %arg2 result_scale %arg3 {{{.*}}result_granularity = #fp8.granularity<tensor>, result_recipe = #fp8.delayed<>}
// CHECK-SAME: -> (tensor<256x512xf8E5M2>, tensor<f32>, tensor<f32>)
// CHECK: return %[[D]], %[[S]], %[[A]]
func.func @delayed_with_amax(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>, %s: tensor<f32>, %scale: tensor<f32>) -> (tensor<256x512xf8E5M2>, tensor<f32>, tensor<f32>) {
  %mm = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x512xf32>
  %q, %qs, %amax = fp8.quantize %mm scale %scale {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<256x512xf32>, tensor<f32> -> rowwise(tensor<256x512xf8E5M2>, tensor<f32>) amax(tensor<f32>)
  return %q, %qs, %amax : tensor<256x512xf8E5M2>, tensor<f32>, tensor<f32>
}

// -----

// Not folded: a bf16 result (its quantization reads the rounded values),
// a result with another user, and a quantization with a columnwise output.
// CHECK-LABEL: func.func @bf16_result
// CHECK: fp8.scaled_matmul {{.*}} -> tensor<256x512xbf16>
// CHECK: fp8.quantize
// CHECK-LABEL: func.func @other_user
// CHECK: fp8.scaled_matmul {{.*}} -> tensor<256x512xf32>
// CHECK: fp8.quantize
// CHECK-LABEL: func.func @columnwise
// CHECK: fp8.scaled_matmul {{.*}} -> tensor<256x512xf32>
// CHECK: fp8.quantize
func.func @bf16_result(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>, %s: tensor<f32>) -> (tensor<256x512xf8E4M3FN>, tensor<256x1xf32>) {
  %mm = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x512xbf16>
  %q, %qs = fp8.quantize %mm {recipe = #fp8.current<>, granularity = #fp8.granularity<row>} : tensor<256x512xbf16> -> rowwise(tensor<256x512xf8E4M3FN>, tensor<256x1xf32>)
  return %q, %qs : tensor<256x512xf8E4M3FN>, tensor<256x1xf32>
}
func.func @other_user(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>, %s: tensor<f32>) -> (tensor<256x512xf8E4M3FN>, tensor<256x1xf32>, tensor<256x512xf32>) {
  %mm = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x512xf32>
  %q, %qs = fp8.quantize %mm {recipe = #fp8.current<>, granularity = #fp8.granularity<row>} : tensor<256x512xf32> -> rowwise(tensor<256x512xf8E4M3FN>, tensor<256x1xf32>)
  return %q, %qs, %mm : tensor<256x512xf8E4M3FN>, tensor<256x1xf32>, tensor<256x512xf32>
}
func.func @columnwise(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>, %s: tensor<f32>) -> (tensor<256x512xf8E4M3FN>, tensor<256x4xf32>, tensor<512x256xf8E4M3FN>, tensor<512x2xf32>) {
  %mm = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x512xf32>
  %q, %qs, %c, %cs = fp8.quantize %mm {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<256x512xf32> -> rowwise(tensor<256x512xf8E4M3FN>, tensor<256x4xf32>) columnwise(tensor<512x256xf8E4M3FN>, tensor<512x2xf32>)
  return %q, %qs, %c, %cs : tensor<256x512xf8E4M3FN>, tensor<256x4xf32>, tensor<512x256xf8E4M3FN>, tensor<512x2xf32>
}

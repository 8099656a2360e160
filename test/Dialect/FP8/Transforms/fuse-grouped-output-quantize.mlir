// RUN: fp8-opt %s -split-input-file -fp8-fuse-scales | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-fuse-scales | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-fuse-scales | FileCheck %s --check-prefix=SM100

// sm_100a's grouped kernels write no FP8 result: the quantizations stay.
// SM100-LABEL: func.func @blockwise
// SM100: fp8.grouped_scaled_matmul {{.*}} -> tensor<?x512xf32>
// SM100: fp8.quantize
// SM100-LABEL: func.func @masked_delayed
// SM100: fp8.grouped_scaled_matmul {{.*}} -> tensor<2x?x512xf32>
// SM100: fp8.quantize

// The next grouped GEMM's quantization of an f32 grouped result folds into
// the grouped op's FP8 result: 1x128 blocks (DeepSeek-V3's activation
// quantization), the quantize's scale_inv the op's second result.
// CHECK-LABEL: func.func @blockwise
// CHECK: %[[D:.*]], %[[S:.*]] = fp8.grouped_scaled_matmul %arg0, %arg1, %arg2, %arg3, %arg4 {{{.*}}result_granularity = #fp8.granularity<tile 1x128>, result_recipe = #fp8.blockwise<>}
// CHECK-SAME: -> (tensor<?x512xf8E4M3FN>, tensor<?x4xf32>)
// CHECK-NOT: fp8.quantize
// CHECK: return %[[D]], %[[S]]
func.func @blockwise(%a: tensor<?x1024xf8E4M3FN>, %b: tensor<4x512x1024xf8E4M3FN>, %sa: tensor<?x8xf32>, %sb: tensor<4x4x8xf32>, %g: tensor<?xi32>) -> (tensor<?x512xf8E4M3FN>, tensor<?x4xf32>) {
  %mm = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x1024xf8E4M3FN>, tensor<4x512x1024xf8E4M3FN>, tensor<?x8xf32>, tensor<4x4x8xf32>, tensor<?xi32>) -> tensor<?x512xf32>
  %q, %s = fp8.quantize %mm {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<?x512xf32> -> rowwise(tensor<?x512xf8E4M3FN>, tensor<?x4xf32>)
  return %q, %s : tensor<?x512xf8E4M3FN>, tensor<?x4xf32>
}

// -----

// Delayed scaling of an m_masked result ([G, M, N], per tensor): the
// quantize's scale becomes result_scale.
// CHECK-LABEL: func.func @masked_delayed
// CHECK: %[[D:.*]], %[[S:.*]] = fp8.grouped_scaled_matmul %arg0, %arg1, %arg2, %arg3, %arg4 result_scale %arg5 {{{.*}}layout = #fp8.grouped_layout<m_masked>, result_granularity = #fp8.granularity<tensor>, result_recipe = #fp8.delayed<>}
// CHECK-SAME: -> (tensor<2x?x512xf8E5M2>, tensor<f32>)
// CHECK: return %[[D]], %[[S]]
func.func @masked_delayed(%a: tensor<2x?x1024xf8E4M3FN>, %b: tensor<2x512x1024xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %m: tensor<2xi32>, %scale: tensor<f32>) -> (tensor<2x?x512xf8E5M2>, tensor<f32>) {
  %mm = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %m {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<2x?x1024xf8E4M3FN>, tensor<2x512x1024xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2x?x512xf32>
  %q, %qs = fp8.quantize %mm scale %scale {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<2x?x512xf32>, tensor<f32> -> rowwise(tensor<2x?x512xf8E5M2>, tensor<f32>)
  return %q, %qs : tensor<2x?x512xf8E5M2>, tensor<f32>
}

// -----

// Not folded: a bf16 result (its quantization reads the rounded values),
// per-tensor current scaling without a scale and rowwise scales (they
// reduce over rows the grouped kernel does not write), a quantization
// with an amax (it would read them too), a result with another user.
// CHECK-LABEL: func.func @bf16_result
// CHECK: fp8.grouped_scaled_matmul {{.*}} -> tensor<?x512xbf16>
// CHECK: fp8.quantize
// CHECK-LABEL: func.func @current_tensor
// CHECK: fp8.grouped_scaled_matmul {{.*}} -> tensor<?x512xf32>
// CHECK: fp8.quantize
// CHECK-LABEL: func.func @rowwise
// CHECK: fp8.grouped_scaled_matmul {{.*}} -> tensor<?x512xf32>
// CHECK: fp8.quantize
// CHECK-LABEL: func.func @with_amax
// CHECK: fp8.grouped_scaled_matmul {{.*}} -> tensor<?x512xf32>
// CHECK: fp8.quantize
// CHECK-LABEL: func.func @other_user
// CHECK: fp8.grouped_scaled_matmul {{.*}} -> tensor<?x512xf32>
// CHECK: fp8.quantize
func.func @bf16_result(%a: tensor<?x1024xf8E4M3FN>, %b: tensor<4x512x1024xf8E4M3FN>, %s: tensor<f32>, %sb: tensor<4xf32>, %g: tensor<?xi32>) -> (tensor<?x512xf8E4M3FN>, tensor<?x4xf32>) {
  %mm = fp8.grouped_scaled_matmul %a, %b, %s, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x1024xf8E4M3FN>, tensor<4x512x1024xf8E4M3FN>, tensor<f32>, tensor<4xf32>, tensor<?xi32>) -> tensor<?x512xbf16>
  %q, %qs = fp8.quantize %mm {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<?x512xbf16> -> rowwise(tensor<?x512xf8E4M3FN>, tensor<?x4xf32>)
  return %q, %qs : tensor<?x512xf8E4M3FN>, tensor<?x4xf32>
}
func.func @current_tensor(%a: tensor<?x1024xf8E4M3FN>, %b: tensor<4x512x1024xf8E4M3FN>, %s: tensor<f32>, %sb: tensor<4xf32>, %g: tensor<?xi32>) -> (tensor<?x512xf8E4M3FN>, tensor<f32>) {
  %mm = fp8.grouped_scaled_matmul %a, %b, %s, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x1024xf8E4M3FN>, tensor<4x512x1024xf8E4M3FN>, tensor<f32>, tensor<4xf32>, tensor<?xi32>) -> tensor<?x512xf32>
  %q, %qs = fp8.quantize %mm {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>} : tensor<?x512xf32> -> rowwise(tensor<?x512xf8E4M3FN>, tensor<f32>)
  return %q, %qs : tensor<?x512xf8E4M3FN>, tensor<f32>
}
func.func @rowwise(%a: tensor<?x1024xf8E4M3FN>, %b: tensor<4x512x1024xf8E4M3FN>, %s: tensor<f32>, %sb: tensor<4xf32>, %g: tensor<?xi32>) -> (tensor<?x512xf8E4M3FN>, tensor<?x1xf32>) {
  %mm = fp8.grouped_scaled_matmul %a, %b, %s, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x1024xf8E4M3FN>, tensor<4x512x1024xf8E4M3FN>, tensor<f32>, tensor<4xf32>, tensor<?xi32>) -> tensor<?x512xf32>
  %q, %qs = fp8.quantize %mm {recipe = #fp8.current<>, granularity = #fp8.granularity<row>} : tensor<?x512xf32> -> rowwise(tensor<?x512xf8E4M3FN>, tensor<?x1xf32>)
  return %q, %qs : tensor<?x512xf8E4M3FN>, tensor<?x1xf32>
}
func.func @with_amax(%a: tensor<?x1024xf8E4M3FN>, %b: tensor<4x512x1024xf8E4M3FN>, %s: tensor<f32>, %sb: tensor<4xf32>, %g: tensor<?xi32>, %scale: tensor<f32>) -> (tensor<?x512xf8E4M3FN>, tensor<f32>, tensor<f32>) {
  %mm = fp8.grouped_scaled_matmul %a, %b, %s, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x1024xf8E4M3FN>, tensor<4x512x1024xf8E4M3FN>, tensor<f32>, tensor<4xf32>, tensor<?xi32>) -> tensor<?x512xf32>
  %q, %qs, %amax = fp8.quantize %mm scale %scale {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<?x512xf32>, tensor<f32> -> rowwise(tensor<?x512xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
  return %q, %qs, %amax : tensor<?x512xf8E4M3FN>, tensor<f32>, tensor<f32>
}
func.func @other_user(%a: tensor<?x1024xf8E4M3FN>, %b: tensor<4x512x1024xf8E4M3FN>, %s: tensor<f32>, %sb: tensor<4xf32>, %g: tensor<?xi32>) -> (tensor<?x512xf8E4M3FN>, tensor<?x4xf32>, tensor<?x512xf32>) {
  %mm = fp8.grouped_scaled_matmul %a, %b, %s, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x1024xf8E4M3FN>, tensor<4x512x1024xf8E4M3FN>, tensor<f32>, tensor<4xf32>, tensor<?xi32>) -> tensor<?x512xf32>
  %q, %qs = fp8.quantize %mm {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<?x512xf32> -> rowwise(tensor<?x512xf8E4M3FN>, tensor<?x4xf32>)
  return %q, %qs, %mm : tensor<?x512xf8E4M3FN>, tensor<?x4xf32>, tensor<?x512xf32>
}

// -----

// Not folded: a k_grouped result (its kernels write bf16, f16 or f32 only).
// CHECK-LABEL: func.func @k_grouped_delayed
// CHECK: fp8.grouped_scaled_matmul {{.*}} -> tensor<3x256x512xf32>
// CHECK: fp8.quantize
// SM100-LABEL: func.func @k_grouped_delayed
// SM100: fp8.grouped_scaled_matmul {{.*}} -> tensor<3x256x512xf32>
// SM100: fp8.quantize
func.func @k_grouped_delayed(%a: tensor<256x?xf8E4M3FN>, %b: tensor<512x?xf8E4M3FN>, %sa: tensor<3xf32>, %sb: tensor<3xf32>, %g: tensor<3xi32>, %scale: tensor<f32>) -> (tensor<3x256x512xf8E4M3FN>, tensor<f32>) {
  %mm = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x?xf8E4M3FN>, tensor<512x?xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3x256x512xf32>
  %q, %qs = fp8.quantize %mm scale %scale {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<3x256x512xf32>, tensor<f32> -> rowwise(tensor<3x256x512xf8E4M3FN>, tensor<f32>)
  return %q, %qs : tensor<3x256x512xf8E4M3FN>, tensor<f32>
}

// -----

// Not folded: per-tensor current scaling of an m_masked result (its scale
// reduces over every group's rows, past the counts too).
// CHECK-LABEL: func.func @masked_current
// CHECK: fp8.grouped_scaled_matmul {{.*}} -> tensor<2x?x512xf32>
// CHECK: fp8.quantize
// SM100-LABEL: func.func @masked_current
// SM100: fp8.grouped_scaled_matmul {{.*}} -> tensor<2x?x512xf32>
// SM100: fp8.quantize
func.func @masked_current(%a: tensor<2x?x1024xf8E4M3FN>, %b: tensor<2x512x1024xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %m: tensor<2xi32>) -> (tensor<2x?x512xf8E4M3FN>, tensor<f32>) {
  %mm = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %m {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<2x?x1024xf8E4M3FN>, tensor<2x512x1024xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2x?x512xf32>
  %q, %qs = fp8.quantize %mm {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>} : tensor<2x?x512xf32> -> rowwise(tensor<2x?x512xf8E4M3FN>, tensor<f32>)
  return %q, %qs : tensor<2x?x512xf8E4M3FN>, tensor<f32>
}

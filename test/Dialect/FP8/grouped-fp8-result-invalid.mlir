// RUN: fp8-opt %s -split-input-file -verify-diagnostics

// The dense op's rules for an FP8 result apply to the grouped op.

func.func @no_quantization(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>) -> tensor<?x256xf8E4M3FN> {
  // expected-error @below {{an FP8 result needs result_recipe and result_granularity (how its consumer quantizes it) and its scale_inv as the second result}}
  %0 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<?xi32>) -> tensor<?x256xf8E4M3FN>
  return %0 : tensor<?x256xf8E4M3FN>
}

// -----

func.func @quantization_of_bf16(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  // expected-error @below {{result_recipe, result_granularity, result_scale and the result's scale_inv belong to an FP8 result (f8E4M3FN or f8E5M2), got a result of element type 'bf16'}}
  %0 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// -----

func.func @delayed_without_scale(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>) -> (tensor<?x256xf8E4M3FN>, tensor<f32>) {
  // expected-error @below {{an FP8 result under delayed scaling needs result_scale (the scale of the previous step, from fp8.compute_scale)}}
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.delayed<>, result_granularity = #fp8.granularity<tensor>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<?xi32>) -> (tensor<?x256xf8E4M3FN>, tensor<f32>)
  return %0, %1 : tensor<?x256xf8E4M3FN>, tensor<f32>
}

// -----

func.func @scale_with_blocks(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>, %qs: tensor<f32>) -> (tensor<?x256xf8E4M3FN>, tensor<?x2xf32>) {
  // expected-error @below {{result_scale is taken with #fp8.delayed or per-tensor #fp8.current only; result recipe #fp8.blockwise<> at tile 1x128 computes its scales from D}}
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g result_scale %qs {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<?xi32>, tensor<f32>) -> (tensor<?x256xf8E4M3FN>, tensor<?x2xf32>)
  return %0, %1 : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>
}

// -----

func.func @contiguous_scale_shape(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>) -> (tensor<?x256xf8E4M3FN>, tensor<?x4xf32>) {
  // expected-error @below {{expected the result's scale_inv of shape [?, 2] (granularity tile 1x128 of a [?, 256] operand), got [?, 4]}}
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<?xi32>) -> (tensor<?x256xf8E4M3FN>, tensor<?x4xf32>)
  return %0, %1 : tensor<?x256xf8E4M3FN>, tensor<?x4xf32>
}

// -----

// m_masked: one set of 1x128 scales per group, G outermost.
func.func @masked_scale_shape(%a: tensor<2x?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %m: tensor<2xi32>) -> (tensor<2x?x256xf8E4M3FN>, tensor<?x2xf32>) {
  // expected-error @below {{expected the result's scale_inv of shape [2, ?, 2] (granularity tile 1x128 of each [?, 256] matrix), got [?, 2]}}
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %m {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<2x?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<2xi32>) -> (tensor<2x?x256xf8E4M3FN>, tensor<?x2xf32>)
  return %0, %1 : tensor<2x?x256xf8E4M3FN>, tensor<?x2xf32>
}

// -----

func.func @e5m2_blocks(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>) -> (tensor<?x256xf8E5M2>, tensor<?x2xf32>) {
  // expected-error @below {{element type 'f8E5M2' of the result is not allowed by recipe #fp8.blockwise<>}}
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<?xi32>) -> (tensor<?x256xf8E5M2>, tensor<?x2xf32>)
  return %0, %1 : tensor<?x256xf8E5M2>, tensor<?x2xf32>
}

// -----

// The k_grouped layout writes a bf16, f16 or f32 result only.
func.func @k_grouped_fp8_result(%a: tensor<256x?xf8E4M3FN>, %b: tensor<512x?xf8E4M3FN>, %sa: tensor<3xf32>, %sb: tensor<3xf32>, %g: tensor<3xi32>, %qs: tensor<f32>) -> (tensor<3x256x512xf8E4M3FN>, tensor<f32>) {
  // expected-error @below {{k_grouped takes a bf16, f16 or f32 result without result_recipe, result_granularity, result_scale or a scale_inv result (no FP8 result for the wgrad layout), got a result of element type 'f8E4M3FN'}}
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g result_scale %qs {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.delayed<>, result_granularity = #fp8.granularity<tensor>} : (tensor<256x?xf8E4M3FN>, tensor<512x?xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>, tensor<f32>) -> (tensor<3x256x512xf8E4M3FN>, tensor<f32>)
  return %0, %1 : tensor<3x256x512xf8E4M3FN>, tensor<f32>
}

// -----

func.func @k_grouped_result_recipe(%a: tensor<256x?xf8E4M3FN>, %b: tensor<512x?xf8E4M3FN>, %sa: tensor<3xf32>, %sb: tensor<3xf32>, %g: tensor<3xi32>) -> tensor<3x256x512xbf16> {
  // expected-error @below {{k_grouped takes a bf16, f16 or f32 result without result_recipe, result_granularity, result_scale or a scale_inv result (no FP8 result for the wgrad layout), got a result of element type 'bf16'}}
  %0 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.blockwise<>} : (tensor<256x?xf8E4M3FN>, tensor<512x?xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3x256x512xbf16>
  return %0 : tensor<3x256x512xbf16>
}

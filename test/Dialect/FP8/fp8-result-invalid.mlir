// RUN: fp8-opt %s -split-input-file -verify-diagnostics

func.func @no_quantization(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>, %s: tensor<f32>) -> tensor<256x512xf8E4M3FN> {
  // expected-error @below {{an FP8 result needs result_recipe and result_granularity (how its consumer quantizes it) and its scale_inv as the second result}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x512xf8E4M3FN>
  return %0 : tensor<256x512xf8E4M3FN>
}

// -----

func.func @quantization_of_bf16(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>, %s: tensor<f32>) -> tensor<256x512xbf16> {
  // expected-error @below {{result_recipe, result_granularity, result_scale and the result's scale_inv belong to an FP8 result (f8E4M3FN or f8E5M2), got a result of element type 'bf16'}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.current<>, result_granularity = #fp8.granularity<tensor>} : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x512xbf16>
  return %0 : tensor<256x512xbf16>
}

// -----

func.func @delayed_without_scale(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>, %s: tensor<f32>) -> (tensor<256x512xf8E4M3FN>, tensor<f32>) {
  // expected-error @below {{an FP8 result under delayed scaling needs result_scale (the scale of the previous step, from fp8.compute_scale)}}
  %0, %1 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.delayed<>, result_granularity = #fp8.granularity<tensor>} : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<f32>, tensor<f32>) -> (tensor<256x512xf8E4M3FN>, tensor<f32>)
  return %0, %1 : tensor<256x512xf8E4M3FN>, tensor<f32>
}

// -----

func.func @blockwise_with_scale(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>, %s: tensor<f32>) -> (tensor<256x512xf8E4M3FN>, tensor<256x4xf32>) {
  // expected-error @below {{result_scale is taken with #fp8.delayed or per-tensor #fp8.current only; result recipe #fp8.blockwise<> at tile 1x128 computes its scales from D}}
  %0, %1 = fp8.scaled_matmul %a, %b, %s, %s result_scale %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<256x512xf8E4M3FN>, tensor<256x4xf32>)
  return %0, %1 : tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
}

// -----

func.func @granularity_not_of_recipe(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>, %s: tensor<f32>) -> (tensor<256x512xf8E4M3FN>, tensor<256x1xf32>) {
  // expected-error @below {{result granularity row is not allowed by result recipe #fp8.delayed<>: expected tensor}}
  %0, %1 = fp8.scaled_matmul %a, %b, %s, %s result_scale %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.delayed<>, result_granularity = #fp8.granularity<row>} : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<256x512xf8E4M3FN>, tensor<256x1xf32>)
  return %0, %1 : tensor<256x512xf8E4M3FN>, tensor<256x1xf32>
}

// -----

func.func @scale_shape(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>, %sa: tensor<256x8xf32>, %sb: tensor<4x8xf32>) -> (tensor<256x512xf8E4M3FN>, tensor<256x8xf32>) {
  // expected-error @below {{expected the result's scale_inv of shape [256, 4] (granularity tile 1x128 of a [256, 512] operand), got [256, 8]}}
  %0, %1 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<4x8xf32>) -> (tensor<256x512xf8E4M3FN>, tensor<256x8xf32>)
  return %0, %1 : tensor<256x512xf8E4M3FN>, tensor<256x8xf32>
}

// -----

func.func @e5m2_blockwise(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>, %s: tensor<f32>) -> (tensor<256x512xf8E5M2>, tensor<256x4xf32>) {
  // expected-error @below {{element type 'f8E5M2' of the result is not allowed by recipe #fp8.blockwise<>}}
  %0, %1 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<f32>, tensor<f32>) -> (tensor<256x512xf8E5M2>, tensor<256x4xf32>)
  return %0, %1 : tensor<256x512xf8E5M2>, tensor<256x4xf32>
}

// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-expand-linear | FileCheck %s

// An expert layer, DeepSeek-V3 blockwise on sm_90a: the 4 experts'
// weights [4, 256, 384] quantized each on its own in 128x128 tiles (a
// batch of matrices), X [1024, 384] in 1x128 blocks, and one m_contiguous
// grouped GEMM reading each expert's weight and scales.
// CHECK-LABEL: func.func @forward
// CHECK:      %[[X:.*]], %[[XS:.*]] = fp8.quantize %arg0 {granularity = #fp8.granularity<tile 1x128>, recipe = #fp8.blockwise<>}
// CHECK-SAME:   -> rowwise(tensor<1024x384xf8E4M3FN>, tensor<1024x3xf32>)
// CHECK:      %[[W:.*]], %[[WS:.*]] = fp8.quantize %arg1 {granularity = #fp8.granularity<tile 128x128>, recipe = #fp8.blockwise<>}
// CHECK-SAME:   -> rowwise(tensor<4x256x384xf8E4M3FN>, tensor<4x2x3xf32>)
// CHECK:      %[[Y:.*]] = fp8.grouped_scaled_matmul %[[X]], %[[W]], %[[XS]], %[[WS]], %arg2
// CHECK-SAME:   a_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<tile 128x128>, layout = #fp8.grouped_layout<m_contiguous>
// CHECK-SAME:   (tensor<1024x384xf8E4M3FN>, tensor<4x256x384xf8E4M3FN>, tensor<1024x3xf32>, tensor<4x2x3xf32>, tensor<1024xi32>) -> tensor<1024x256xbf16>
// CHECK-NOT:  fp8.grouped_linear
// CHECK:      return %[[Y]]
func.func @forward(%x: tensor<1024x384xbf16>, %w: tensor<4x256x384xbf16>, %index: tensor<1024xi32>)
    -> tensor<1024x256xbf16> {
  %y = fp8.grouped_linear %x, %w groups %index {recipe = #fp8.blockwise<>}
      : (tensor<1024x384xbf16>, tensor<4x256x384xbf16>, tensor<1024xi32>) -> tensor<1024x256xbf16>
  return %y : tensor<1024x256xbf16>
}

// -----

// A run-time token count: the forward alone (inference) compiles per G, N, K.
// CHECK-LABEL: func.func @forward_dynamic
// CHECK: fp8.quantize %arg0 {{.*}} -> rowwise(tensor<?x384xf8E4M3FN>, tensor<?x3xf32>)
// CHECK: fp8.grouped_scaled_matmul {{.*}} -> tensor<?x256xbf16>
func.func @forward_dynamic(%x: tensor<?x384xbf16>, %w: tensor<4x256x384xbf16>, %index: tensor<?xi32>)
    -> tensor<?x256xbf16> {
  %y = fp8.grouped_linear %x, %w groups %index {recipe = #fp8.blockwise<>}
      : (tensor<?x384xbf16>, tensor<4x256x384xbf16>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}

// -----

// A training step: each tensor quantized once with every output its GEMMs
// read (X and dY rowwise and transposed 1x128, each expert's weight rowwise
// and transposed 128x128), fprop and dgrad m_contiguous by the group index,
// wgrad k_grouped by the group sizes over dY^T and X^T.
// CHECK-LABEL: func.func @step
// CHECK:      %[[X:.*]], %[[XS:.*]], %[[XT:.*]], %[[XTS:.*]] = fp8.quantize %arg0 {granularity = #fp8.granularity<tile 1x128>, recipe = #fp8.blockwise<>}
// CHECK-SAME:   -> rowwise(tensor<1024x384xf8E4M3FN>, tensor<1024x3xf32>) columnwise(tensor<384x1024xf8E4M3FN>, tensor<384x8xf32>)
// CHECK:      %[[W:.*]], %[[WS:.*]], %[[WT:.*]], %[[WTS:.*]] = fp8.quantize %arg1 {granularity = #fp8.granularity<tile 128x128>, recipe = #fp8.blockwise<>}
// CHECK-SAME:   -> rowwise(tensor<4x256x384xf8E4M3FN>, tensor<4x2x3xf32>) columnwise(tensor<4x384x256xf8E4M3FN>, tensor<4x3x2xf32>)
// CHECK:      %[[Y:.*]] = fp8.grouped_scaled_matmul %[[X]], %[[W]], %[[XS]], %[[WS]], %arg3
// CHECK-SAME:   layout = #fp8.grouped_layout<m_contiguous>
// CHECK-SAME:   -> tensor<1024x256xbf16>
// CHECK:      %[[G:.*]], %[[GS:.*]], %[[GT:.*]], %[[GTS:.*]] = fp8.quantize %arg2 {granularity = #fp8.granularity<tile 1x128>, recipe = #fp8.blockwise<>}
// CHECK-SAME:   -> rowwise(tensor<1024x256xf8E4M3FN>, tensor<1024x2xf32>) columnwise(tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>)
// CHECK:      %[[DX:.*]] = fp8.grouped_scaled_matmul %[[G]], %[[WT]], %[[GS]], %[[WTS]], %arg3
// CHECK-SAME:   a_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<tile 128x128>, layout = #fp8.grouped_layout<m_contiguous>
// CHECK-SAME:   (tensor<1024x256xf8E4M3FN>, tensor<4x384x256xf8E4M3FN>, tensor<1024x2xf32>, tensor<4x3x2xf32>, tensor<1024xi32>) -> tensor<1024x384xbf16>
// CHECK:      %[[DW:.*]] = fp8.grouped_scaled_matmul %[[GT]], %[[XT]], %[[GTS]], %[[XTS]], %arg4
// CHECK-SAME:   a_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<tile 1x128>, layout = #fp8.grouped_layout<k_grouped>
// CHECK-SAME:   (tensor<256x1024xf8E4M3FN>, tensor<384x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<384x8xf32>, tensor<4xi32>) -> tensor<4x256x384xf32>
// CHECK-NOT:  fp8.quantize
// CHECK-NOT:  fp8.grouped_linear
// CHECK:      return %[[Y]], %[[DX]], %[[DW]]
func.func @step(%x: tensor<1024x384xbf16>, %w: tensor<4x256x384xbf16>, %dy: tensor<1024x256xbf16>,
                %index: tensor<1024xi32>, %sizes: tensor<4xi32>)
    -> (tensor<1024x256xbf16>, tensor<1024x384xbf16>, tensor<4x256x384xf32>) {
  %y = fp8.grouped_linear %x, %w groups %index {recipe = #fp8.blockwise<>}
      : (tensor<1024x384xbf16>, tensor<4x256x384xbf16>, tensor<1024xi32>) -> tensor<1024x256xbf16>
  %dx, %dw = fp8.grouped_linear_backward %x, %w, %dy groups(%index, %sizes) {recipe = #fp8.blockwise<>}
      : (tensor<1024x384xbf16>, tensor<4x256x384xbf16>, tensor<1024x256xbf16>, tensor<1024xi32>, tensor<4xi32>)
      -> (tensor<1024x384xbf16>, tensor<4x256x384xf32>)
  return %y, %dx, %dw : tensor<1024x256xbf16>, tensor<1024x384xbf16>, tensor<4x256x384xf32>
}

// RUN: fp8-opt %s | fp8-opt | FileCheck %s

// CHECK-LABEL: func.func @blockwise
// CHECK: fp8.grouped_scaled_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {a_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<tile 128x128>, layout = #fp8.grouped_layout<m_contiguous>}
// CHECK-SAME: (tensor<?x7168xf8E4M3FN>, tensor<8x4096x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<8x32x56xf32>, tensor<?xi32>) -> tensor<?x4096xbf16>
func.func @blockwise(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<8x4096x7168xf8E4M3FN>,
                     %sa: tensor<?x56xf32>, %sb: tensor<8x32x56xf32>,
                     %groups: tensor<?xi32>) -> tensor<?x4096xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %groups
      {layout = #fp8.grouped_layout<m_contiguous>,
       a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 128x128>,
       accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<?x7168xf8E4M3FN>, tensor<8x4096x7168xf8E4M3FN>, tensor<?x56xf32>,
         tensor<8x32x56xf32>, tensor<?xi32>) -> tensor<?x4096xbf16>
  return %d : tensor<?x4096xbf16>
}

// CHECK-LABEL: func.func @rowwise
// CHECK: fp8.grouped_scaled_matmul
// CHECK-SAME: (tensor<?x2048xf8E4M3FN>, tensor<4x7168x2048xf8E4M3FN>, tensor<?x1xf32>, tensor<4x7168x1xf32>, tensor<?xi32>) -> tensor<?x7168xf16>
func.func @rowwise(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<4x7168x2048xf8E4M3FN>,
                   %sa: tensor<?x1xf32>, %sb: tensor<4x7168x1xf32>,
                   %groups: tensor<?xi32>) -> tensor<?x7168xf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %groups
      {layout = #fp8.grouped_layout<m_contiguous>,
       a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<?x2048xf8E4M3FN>, tensor<4x7168x2048xf8E4M3FN>, tensor<?x1xf32>,
         tensor<4x7168x1xf32>, tensor<?xi32>) -> tensor<?x7168xf16>
  return %d : tensor<?x7168xf16>
}

// CHECK-LABEL: func.func @tensorwise
// CHECK: fp8.grouped_scaled_matmul
// CHECK-SAME: (tensor<256x512xf8E5M2>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<256xi32>) -> tensor<256x256xf32>
func.func @tensorwise(%a: tensor<256x512xf8E5M2>, %b: tensor<2x256x512xf8E4M3FN>,
                      %sa: tensor<f32>, %sb: tensor<2xf32>,
                      %groups: tensor<256xi32>) -> tensor<256x256xf32> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %groups
      {layout = #fp8.grouped_layout<m_contiguous>,
       a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<256x512xf8E5M2>, tensor<2x256x512xf8E4M3FN>, tensor<f32>,
         tensor<2xf32>, tensor<256xi32>) -> tensor<256x256xf32>
  return %d : tensor<256x256xf32>
}

// MXFP8: UE8M0 scales per 1x32 block, B's per group.
// CHECK-LABEL: func.func @mxfp8
// CHECK: a_granularity = #fp8.granularity<mx 1x32>
// CHECK-SAME: (tensor<?x7168xf8E4M3FN>, tensor<8x4096x7168xf8E4M3FN>, tensor<?x224xf8E8M0FNU>, tensor<8x4096x224xf8E8M0FNU>, tensor<?xi32>) -> tensor<?x4096xbf16>
func.func @mxfp8(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<8x4096x7168xf8E4M3FN>,
                 %sa: tensor<?x224xf8E8M0FNU>, %sb: tensor<8x4096x224xf8E8M0FNU>,
                 %g: tensor<?xi32>) -> tensor<?x4096xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>,
       a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<?x7168xf8E4M3FN>, tensor<8x4096x7168xf8E4M3FN>, tensor<?x224xf8E8M0FNU>,
         tensor<8x4096x224xf8E8M0FNU>, tensor<?xi32>) -> tensor<?x4096xbf16>
  return %d : tensor<?x4096xbf16>
}

// Blockwise with UE8M0 scales (powers of two: sm_100a's block-scaled MMA).
// CHECK-LABEL: func.func @blockwise_ue8m0
// CHECK: fp8.grouped_scaled_matmul {{.*}}tensor<?x4xf8E8M0FNU>, tensor<2x2x4xf8E8M0FNU>
func.func @blockwise_ue8m0(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                           %sa: tensor<?x4xf8E8M0FNU>, %sb: tensor<2x2x4xf8E8M0FNU>,
                           %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>,
       a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>,
       accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x4xf8E8M0FNU>,
         tensor<2x2x4xf8E8M0FNU>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// The m_masked layout: A [G, M, K], the valid rows of each group [G], D
// [G, M, N]; per-row and 1x128 A scales per group.
// CHECK-LABEL: func.func @masked_blockwise
// CHECK: fp8.grouped_scaled_matmul {{.*}} layout = #fp8.grouped_layout<m_masked>}
// CHECK-SAME: (tensor<4x?x7168xf8E4M3FN>, tensor<4x4096x7168xf8E4M3FN>, tensor<4x?x56xf32>, tensor<4x32x56xf32>, tensor<4xi32>) -> tensor<4x?x4096xbf16>
func.func @masked_blockwise(%a: tensor<4x?x7168xf8E4M3FN>, %b: tensor<4x4096x7168xf8E4M3FN>,
                            %sa: tensor<4x?x56xf32>, %sb: tensor<4x32x56xf32>,
                            %counts: tensor<4xi32>) -> tensor<4x?x4096xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %counts
      {layout = #fp8.grouped_layout<m_masked>,
       a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 128x128>,
       accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<4x?x7168xf8E4M3FN>, tensor<4x4096x7168xf8E4M3FN>, tensor<4x?x56xf32>,
         tensor<4x32x56xf32>, tensor<4xi32>) -> tensor<4x?x4096xbf16>
  return %d : tensor<4x?x4096xbf16>
}

// CHECK-LABEL: func.func @masked_rowwise
// CHECK: fp8.grouped_scaled_matmul
// CHECK-SAME: (tensor<2x256x2048xf8E4M3FN>, tensor<2x7168x2048xf8E4M3FN>, tensor<2x256x1xf32>, tensor<2x7168x1xf32>, tensor<2xi32>) -> tensor<2x256x7168xf16>
func.func @masked_rowwise(%a: tensor<2x256x2048xf8E4M3FN>, %b: tensor<2x7168x2048xf8E4M3FN>,
                          %sa: tensor<2x256x1xf32>, %sb: tensor<2x7168x1xf32>,
                          %counts: tensor<2xi32>) -> tensor<2x256x7168xf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %counts
      {layout = #fp8.grouped_layout<m_masked>,
       a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<2x256x2048xf8E4M3FN>, tensor<2x7168x2048xf8E4M3FN>, tensor<2x256x1xf32>,
         tensor<2x7168x1xf32>, tensor<2xi32>) -> tensor<2x256x7168xf16>
  return %d : tensor<2x256x7168xf16>
}

// CHECK-LABEL: func.func @masked_tensorwise
// CHECK: fp8.grouped_scaled_matmul
// CHECK-SAME: (tensor<2x64x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2x64x256xf32>
func.func @masked_tensorwise(%a: tensor<2x64x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                             %sa: tensor<f32>, %sb: tensor<2xf32>,
                             %counts: tensor<2xi32>) -> tensor<2x64x256xf32> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %counts
      {layout = #fp8.grouped_layout<m_masked>,
       a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<2x64x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>,
         tensor<2xf32>, tensor<2xi32>) -> tensor<2x64x256xf32>
  return %d : tensor<2x64x256xf32>
}

// The k_grouped layout (the experts' weight gradient): A [M, K], B [N, K]
// over the tokens of all groups, the sizes [G], D [G, M, N].

// CHECK-LABEL: func.func @k_grouped_blockwise
// CHECK: fp8.grouped_scaled_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {a_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<tile 1x128>, layout = #fp8.grouped_layout<k_grouped>}
// CHECK-SAME: (tensor<2048x?xf8E4M3FN>, tensor<7168x?xf8E4M3FN>, tensor<2048x?xf32>, tensor<7168x?xf32>, tensor<8xi32>) -> tensor<8x2048x7168xf32>
func.func @k_grouped_blockwise(%a: tensor<2048x?xf8E4M3FN>, %b: tensor<7168x?xf8E4M3FN>,
                               %sa: tensor<2048x?xf32>, %sb: tensor<7168x?xf32>,
                               %sizes: tensor<8xi32>) -> tensor<8x2048x7168xf32> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %sizes
      {layout = #fp8.grouped_layout<k_grouped>,
       a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 1x128>,
       accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<2048x?xf8E4M3FN>, tensor<7168x?xf8E4M3FN>, tensor<2048x?xf32>,
         tensor<7168x?xf32>, tensor<8xi32>) -> tensor<8x2048x7168xf32>
  return %d : tensor<8x2048x7168xf32>
}

// CHECK-LABEL: func.func @k_grouped_rowwise
// CHECK: fp8.grouped_scaled_matmul
// CHECK-SAME: (tensor<256x1024xf8E5M2>, tensor<512x1024xf8E4M3FN>, tensor<4x256x1xf32>, tensor<4x512x1xf32>, tensor<4xi32>) -> tensor<4x256x512xbf16>
func.func @k_grouped_rowwise(%a: tensor<256x1024xf8E5M2>, %b: tensor<512x1024xf8E4M3FN>,
                             %sa: tensor<4x256x1xf32>, %sb: tensor<4x512x1xf32>,
                             %sizes: tensor<4xi32>) -> tensor<4x256x512xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %sizes
      {layout = #fp8.grouped_layout<k_grouped>,
       a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<256x1024xf8E5M2>, tensor<512x1024xf8E4M3FN>, tensor<4x256x1xf32>,
         tensor<4x512x1xf32>, tensor<4xi32>) -> tensor<4x256x512xbf16>
  return %d : tensor<4x256x512xbf16>
}

// CHECK-LABEL: func.func @k_grouped_tensorwise
// CHECK: fp8.grouped_scaled_matmul
// CHECK-SAME: (tensor<256x?xf8E5M2>, tensor<512x?xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3x256x512xf32>
func.func @k_grouped_tensorwise(%a: tensor<256x?xf8E5M2>, %b: tensor<512x?xf8E4M3FN>,
                                %sa: tensor<3xf32>, %sb: tensor<3xf32>,
                                %sizes: tensor<3xi32>) -> tensor<3x256x512xf32> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %sizes
      {layout = #fp8.grouped_layout<k_grouped>,
       a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<256x?xf8E5M2>, tensor<512x?xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>,
         tensor<3xi32>) -> tensor<3x256x512xf32>
  return %d : tensor<3x256x512xf32>
}

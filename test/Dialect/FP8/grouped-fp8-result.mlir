// RUN: fp8-opt %s | FileCheck %s
// RUN: fp8-opt %s -mlir-print-op-generic | fp8-opt | FileCheck %s

// A grouped GEMM's FP8 result: D quantized for the next grouped GEMM, with
// its scale_inv as the second result, as fp8.scaled_matmul's.

// Per tensor with a given scale: one scale for all groups.
// CHECK-LABEL: func.func @delayed
// CHECK: %{{.*}}, %{{.*}} = fp8.grouped_scaled_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} result_scale %{{.*}} {{{.*}}result_granularity = #fp8.granularity<tensor>, result_recipe = #fp8.delayed<>}
// CHECK-SAME: -> (tensor<?x4096xf8E5M2>, tensor<f32>)
func.func @delayed(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<8x4096x2048xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<8xf32>, %g: tensor<?xi32>, %qs: tensor<f32>) -> (tensor<?x4096xf8E5M2>, tensor<f32>) {
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g result_scale %qs {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.delayed<>, result_granularity = #fp8.granularity<tensor>} : (tensor<?x2048xf8E4M3FN>, tensor<8x4096x2048xf8E4M3FN>, tensor<f32>, tensor<8xf32>, tensor<?xi32>, tensor<f32>) -> (tensor<?x4096xf8E5M2>, tensor<f32>)
  return %0, %1 : tensor<?x4096xf8E5M2>, tensor<f32>
}

// 1x128 blocks along N: [M, ceil(N/128)] scales, the next grouped GEMM's A
// scales.
// CHECK-LABEL: func.func @blockwise
// CHECK: fp8.grouped_scaled_matmul {{.*}}result_granularity = #fp8.granularity<tile 1x128>, result_recipe = #fp8.blockwise<>}
// CHECK-SAME: -> (tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>)
func.func @blockwise(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<4x2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<4x17x56xf32>, %g: tensor<?xi32>) -> (tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>) {
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<?x7168xf8E4M3FN>, tensor<4x2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<4x17x56xf32>, tensor<?xi32>) -> (tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>)
  return %0, %1 : tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>
}

// m_masked: the 1x128 scales of each group, [G, M, ceil(N/128)].
// CHECK-LABEL: func.func @masked_blockwise
// CHECK: fp8.grouped_scaled_matmul {{.*}}layout = #fp8.grouped_layout<m_masked>{{.*}}result_recipe = #fp8.blockwise<>}
// CHECK-SAME: -> (tensor<4x?x4096xf8E4M3FN>, tensor<4x?x32xf32>)
func.func @masked_blockwise(%a: tensor<4x?x7168xf8E4M3FN>, %b: tensor<4x4096x7168xf8E4M3FN>, %sa: tensor<4x?x56xf32>, %sb: tensor<4x32x56xf32>, %m: tensor<4xi32>) -> (tensor<4x?x4096xf8E4M3FN>, tensor<4x?x32xf32>) {
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %m {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<4x?x7168xf8E4M3FN>, tensor<4x4096x7168xf8E4M3FN>, tensor<4x?x56xf32>, tensor<4x32x56xf32>, tensor<4xi32>) -> (tensor<4x?x4096xf8E4M3FN>, tensor<4x?x32xf32>)
  return %0, %1 : tensor<4x?x4096xf8E4M3FN>, tensor<4x?x32xf32>
}

// m_masked per tensor: one scale for all groups.
// CHECK-LABEL: func.func @masked_delayed
// CHECK-SAME: -> (tensor<2x?x1024xf8E4M3FN>, tensor<f32>)
func.func @masked_delayed(%a: tensor<2x?x512xf8E4M3FN>, %b: tensor<2x1024x512xf8E4M3FN>, %sa: tensor<2x?x1xf32>, %sb: tensor<2x1024x1xf32>, %m: tensor<2xi32>, %qs: tensor<f32>) -> (tensor<2x?x1024xf8E4M3FN>, tensor<f32>) {
  %0, %1 = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %m result_scale %qs {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.delayed<>, result_granularity = #fp8.granularity<tensor>} : (tensor<2x?x512xf8E4M3FN>, tensor<2x1024x512xf8E4M3FN>, tensor<2x?x1xf32>, tensor<2x1024x1xf32>, tensor<2xi32>, tensor<f32>) -> (tensor<2x?x1024xf8E4M3FN>, tensor<f32>)
  return %0, %1 : tensor<2x?x1024xf8E4M3FN>, tensor<f32>
}

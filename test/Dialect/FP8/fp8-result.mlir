// RUN: fp8-opt %s | FileCheck %s
// RUN: fp8-opt %s -mlir-print-op-generic | fp8-opt | FileCheck %s

// An FP8 result: D quantized for its consumer, with its scale_inv (and the
// amax of D before quantization) as further results.

// CHECK-LABEL: func.func @delayed
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = fp8.scaled_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} result_scale %{{.*}} {{{.*}}result_granularity = #fp8.granularity<tensor>, result_recipe = #fp8.delayed<>}
// CHECK-SAME: -> (tensor<?x4096xf8E4M3FN>, tensor<f32>, tensor<f32>)
func.func @delayed(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<4096x2048xf8E4M3FN>, %s: tensor<f32>, %qs: tensor<f32>) -> (tensor<?x4096xf8E4M3FN>, tensor<f32>, tensor<f32>) {
  %0, %1, %2 = fp8.scaled_matmul %a, %b, %s, %s result_scale %qs {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.delayed<>, result_granularity = #fp8.granularity<tensor>} : (tensor<?x2048xf8E4M3FN>, tensor<4096x2048xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<?x4096xf8E4M3FN>, tensor<f32>, tensor<f32>)
  return %0, %1, %2 : tensor<?x4096xf8E4M3FN>, tensor<f32>, tensor<f32>
}

// CHECK-LABEL: func.func @blockwise
// CHECK: fp8.scaled_matmul {{.*}}result_granularity = #fp8.granularity<tile 1x128>, result_recipe = #fp8.blockwise<>}
// CHECK-SAME: -> (tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>)
func.func @blockwise(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<2112x2048xf8E4M3FN>, %sa: tensor<?x16xf32>, %sb: tensor<17x16xf32>) -> (tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>) {
  %0, %1 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<?x2048xf8E4M3FN>, tensor<2112x2048xf8E4M3FN>, tensor<?x16xf32>, tensor<17x16xf32>) -> (tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>)
  return %0, %1 : tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>
}

// CHECK-LABEL: func.func @rowwise_e5m2
// CHECK: -> (tensor<256x512xf8E5M2>, tensor<256x1xf32>)
func.func @rowwise_e5m2(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>, %s: tensor<f32>) -> (tensor<256x512xf8E5M2>, tensor<256x1xf32>) {
  %0, %1 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.current<>, result_granularity = #fp8.granularity<row>} : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<f32>, tensor<f32>) -> (tensor<256x512xf8E5M2>, tensor<256x1xf32>)
  return %0, %1 : tensor<256x512xf8E5M2>, tensor<256x1xf32>
}

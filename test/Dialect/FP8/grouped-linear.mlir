// RUN: fp8-opt %s | fp8-opt | FileCheck %s

// The expert layer's forward and backward, and a quantization of stacked
// expert weights, round trip.

// CHECK-LABEL: func.func @step
// CHECK: fp8.grouped_linear %arg0, %arg1 groups %arg3 {recipe = #fp8.blockwise<>}
// CHECK-SAME: (tensor<?x7168xbf16>, tensor<8x4096x7168xbf16>, tensor<?xi32>) -> tensor<?x4096xbf16>
// CHECK: fp8.grouped_linear_backward %arg0, %arg1, %arg2 groups(%arg3, %arg4) {recipe = #fp8.blockwise<>}
// CHECK-SAME: -> (tensor<?x7168xbf16>, tensor<8x4096x7168xf32>)
func.func @step(%x: tensor<?x7168xbf16>, %w: tensor<8x4096x7168xbf16>, %dy: tensor<?x4096xbf16>,
                %index: tensor<?xi32>, %sizes: tensor<8xi32>)
    -> (tensor<?x4096xbf16>, tensor<?x7168xbf16>, tensor<8x4096x7168xf32>) {
  %y = fp8.grouped_linear %x, %w groups %index {recipe = #fp8.blockwise<>}
      : (tensor<?x7168xbf16>, tensor<8x4096x7168xbf16>, tensor<?xi32>) -> tensor<?x4096xbf16>
  %dx, %dw = fp8.grouped_linear_backward %x, %w, %dy groups(%index, %sizes) {recipe = #fp8.blockwise<>}
      : (tensor<?x7168xbf16>, tensor<8x4096x7168xbf16>, tensor<?x4096xbf16>, tensor<?xi32>, tensor<8xi32>)
      -> (tensor<?x7168xbf16>, tensor<8x4096x7168xf32>)
  return %y, %dx, %dw : tensor<?x4096xbf16>, tensor<?x7168xbf16>, tensor<8x4096x7168xf32>
}

// Four [256, 384] weights, each quantized on its own in 128x128 tiles:
// each one's transpose [384, 256] (the per-expert K-major copy) and the
// scales of each, G outermost.
// CHECK-LABEL: func.func @batch
// CHECK: fp8.quantize %arg0 {granularity = #fp8.granularity<tile 128x128>, recipe = #fp8.blockwise<>}
// CHECK-SAME: -> rowwise(tensor<4x256x384xf8E4M3FN>, tensor<4x2x3xf32>) columnwise(tensor<4x384x256xf8E4M3FN>, tensor<4x3x2xf32>)
func.func @batch(%w: tensor<4x256x384xbf16>)
    -> (tensor<4x256x384xf8E4M3FN>, tensor<4x2x3xf32>, tensor<4x384x256xf8E4M3FN>, tensor<4x3x2xf32>) {
  %q, %s, %qt, %st = fp8.quantize %w {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>}
      : tensor<4x256x384xbf16> -> rowwise(tensor<4x256x384xf8E4M3FN>, tensor<4x2x3xf32>) columnwise(tensor<4x384x256xf8E4M3FN>, tensor<4x3x2xf32>)
  return %q, %s, %qt, %st : tensor<4x256x384xf8E4M3FN>, tensor<4x2x3xf32>, tensor<4x384x256xf8E4M3FN>, tensor<4x3x2xf32>
}

// Bad input never crashes fp8-opt: each case below is a located error and a
// non-zero exit. (`not` fails the test if fp8-opt dies from a signal.)
// RUN: not fp8-opt %s -split-input-file 2>&1 | FileCheck %s
// RUN: not fp8-opt %s -split-input-file -canonicalize -fp8-decompose-quantize -fp8-attach-target=chip=sm_90a -fp8-verify-target 2>&1 | FileCheck %s

// Truncated op.
func.func @truncated(%x: tensor<128x256xbf16>) {
  // CHECK: bad-input.mlir:[[@LINE+1]]:{{[0-9]+}}: error: expected attribute value
  %q, %s = fp8.quantize %x {recipe =
}

// -----

// Unknown attribute of the dialect.
// CHECK: bad-input.mlir:[[@LINE+1]]:{{[0-9]+}}: error: {{.*}}stochastic
func.func private @unknown_attr() attributes {r = #fp8.stochastic<>}

// -----

// Misspelled recipe parameter.
// CHECK: bad-input.mlir:[[@LINE+1]]:{{[0-9]+}}: error: {{.*}}histroy
func.func private @misspelled() attributes {r = #fp8.delayed<histroy = 16>}

// -----

// Out-of-range integer.
// CHECK: bad-input.mlir:[[@LINE+1]]:{{[0-9]+}}: error: {{.*}}
func.func private @overflow() attributes {r = #fp8.delayed<history = 99999999999999999999999>}

// -----

// Negative tile extent.
// CHECK: bad-input.mlir:[[@LINE+1]]:{{[0-9]+}}: error: expected a 2-D tile shape RxC of positive integers
func.func private @negative_tile() attributes {r = #fp8.granularity<tile -1x128>}

// -----

// Unknown op.
func.func @unknown_op(%x: tensor<4xbf16>) {
  // CHECK: bad-input.mlir:[[@LINE+1]]:{{[0-9]+}}: error: custom op 'fp8.gemm' is unknown
  %0 = fp8.gemm %x : tensor<4xbf16>
  return
}

// -----

// Wrong shapes: K disagrees.
func.func @wrong_k(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x512xf8E4M3FN>, %s: tensor<f32>) {
  // CHECK: bad-input.mlir:[[@LINE+1]]:{{[0-9]+}}: error: 'fp8.scaled_matmul' op expected A and B to have the same K
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x512xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return
}

// -----

// Contradictory recipe: blockwise data must be E4M3.
func.func @blockwise_e5m2(%x: tensor<128x256xbf16>) {
  // CHECK: bad-input.mlir:[[@LINE+1]]:{{[0-9]+}}: error: 'fp8.quantize' op element type 'f8E5M2' of rowwise data is not allowed by recipe #fp8.blockwise<>
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E5M2>, tensor<128x2xf32>)
  return
}

// -----

// Contradictory recipe: blockwise without promotion.
// CHECK: bad-input.mlir:[[@LINE+1]]:{{[0-9]+}}: error: blockwise scales change every 128 K elements
func.func private @blockwise_fast() attributes {r = #fp8.blockwise<accumulate = fast>}

// -----

// Contradictory recipe: MX blocks with a current-scaling recipe.
func.func @mx_current(%x: tensor<128x256xbf16>) {
  // CHECK: bad-input.mlir:[[@LINE+1]]:{{[0-9]+}}: error: 'fp8.quantize' op granularity mx 1x32 is not allowed by recipe #fp8.current<>
  %q, %s = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<mx 1x32>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
  return
}

// -----

// A recipe where a granularity belongs.
func.func @attr_kind(%q: tensor<4x8xf8E4M3FN>, %s: tensor<f32>) {
  // CHECK: bad-input.mlir:[[@LINE+1]]:{{[0-9]+}}: error: {{.*}}granularity
  %0 = fp8.dequantize %q, %s {granularity = #fp8.current<>} : tensor<4x8xf8E4M3FN>, tensor<f32> -> tensor<4x8xbf16>
  return
}

// -----

// Missing required attribute.
func.func @missing_accumulation(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) {
  // CHECK: bad-input.mlir:[[@LINE+1]]:{{[0-9]+}}: error: {{.*}}accumulation
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return
}

// -----

// Wrong operand count in the generic form.
func.func @generic_operands(%x: tensor<4xf32>) {
  // CHECK: bad-input.mlir:[[@LINE+1]]:{{[0-9]+}}: error: 'fp8.amax' op requires a single operand
  %0 = "fp8.amax"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

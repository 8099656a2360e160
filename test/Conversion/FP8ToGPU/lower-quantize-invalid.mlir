// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-quantize -verify-diagnostics
// With strict=false, what no kernel takes stays as it is.
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-quantize=strict=false | FileCheck %s

// A run-time R is a kernel parameter; a run-time C is not.
// CHECK-LABEL: func.func @dynamic_cols
// CHECK: fp8.quantize
func.func @dynamic_cols(%x: tensor<128x?xbf16>) -> (tensor<128x?xf8E4M3FN>, tensor<128x?xf32>) {
  // expected-error @+1 {{the quantization kernels are built per static shape}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>}
      : tensor<128x?xbf16> -> rowwise(tensor<128x?xf8E4M3FN>, tensor<128x?xf32>)
  return %q, %s : tensor<128x?xf8E4M3FN>, tensor<128x?xf32>
}

// -----

func.func @cols(%x: tensor<128x200xbf16>) -> (tensor<128x200xf8E4M3FN>, tensor<128x2xf32>) {
  // expected-error @+1 {{the quantization kernels take C (the last dimension) a multiple of 16}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>}
      : tensor<128x200xbf16> -> rowwise(tensor<128x200xf8E4M3FN>, tensor<128x2xf32>)
  return %q, %s : tensor<128x200xf8E4M3FN>, tensor<128x2xf32>
}

// -----

func.func @rows(%x: tensor<120x256xbf16>) -> (tensor<256x120xf8E4M3FN>, tensor<256x1xf32>) {
  // expected-error @+1 {{a columnwise (transposed) output needs R a multiple of 16}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>}
      : tensor<120x256xbf16> -> columnwise(tensor<256x120xf8E4M3FN>, tensor<256x1xf32>)
  return %q, %s : tensor<256x120xf8E4M3FN>, tensor<256x1xf32>
}

// -----

// Row granularity: one output per kernel (fp8-decompose-quantize splits).
// CHECK-LABEL: func.func @row_granularity_both_outputs
// CHECK: fp8.quantize
func.func @row_granularity_both_outputs(%x: tensor<128x256xbf16>) -> (tensor<128x256xf8E4M3FN>, tensor<128x1xf32>, tensor<256x128xf8E4M3FN>, tensor<256x1xf32>) {
  // expected-error @+1 {{the row-granularity quantization kernels write the rowwise or the columnwise output, not both: run fp8-decompose-quantize}}
  %q, %s, %qt, %st = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<row>}
      : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x1xf32>) columnwise(tensor<256x128xf8E4M3FN>, tensor<256x1xf32>)
  return %q, %s, %qt, %st : tensor<128x256xf8E4M3FN>, tensor<128x1xf32>, tensor<256x128xf8E4M3FN>, tensor<256x1xf32>
}

// -----

func.func @fused_current(%x: tensor<128x256xbf16>) -> (tensor<128x256xf8E4M3FN>, tensor<f32>) {
  // expected-error @+1 {{needs a grid-wide amax first: run fp8-decompose-quantize}}
  %q, %s = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>}
      : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<f32>)
  return %q, %s : tensor<128x256xf8E4M3FN>, tensor<f32>
}

// -----

// A run-time R is a parameter of the dequantization kernels too; a run-time
// C is not.
// CHECK-LABEL: func.func @dequantize_dynamic_cols
// CHECK: fp8.dequantize
func.func @dequantize_dynamic_cols(%q: tensor<128x?xf8E4M3FN>, %s: tensor<128x?xf32>) -> tensor<128x?xbf16> {
  // expected-error @+1 {{the dequantization kernels are built per static shape}}
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 1x128>}
      : tensor<128x?xf8E4M3FN>, tensor<128x?xf32> -> tensor<128x?xbf16>
  return %y : tensor<128x?xbf16>
}

// -----

func.func @dequantize_cols(%q: tensor<128x100xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x100xbf16> {
  // expected-error @+1 {{the dequantization kernels take C (the last dimension) a multiple of 8}}
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tensor>}
      : tensor<128x100xf8E4M3FN>, tensor<f32> -> tensor<128x100xbf16>
  return %y : tensor<128x100xbf16>
}

// -----

func.func @dequantize_ue8m0_tiles(%q: tensor<128x256xf8E4M3FN>, %s: tensor<128x2xf8E8M0FNU>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{the dequantization kernels read f32 scale_inv for tile granularities}}
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 1x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf8E8M0FNU> -> tensor<128x256xbf16>
  return %y : tensor<128x256xbf16>
}

// -----

func.func @dequantize_tile_64(%q: tensor<128x256xf8E4M3FN>, %s: tensor<2x4xf32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{the dequantization kernels take 1x128 and 128x128 tiles, got tile 64x64}}
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 64x64>}
      : tensor<128x256xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x256xbf16>
  return %y : tensor<128x256xbf16>
}

// -----

func.func @dequantize_rank1(%q: tensor<256xf8E4M3FN>, %s: tensor<f32>) -> tensor<256xbf16> {
  // expected-error @+1 {{the dequantization kernels take 2-D inputs, got rank 1}}
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tensor>}
      : tensor<256xf8E4M3FN>, tensor<f32> -> tensor<256xbf16>
  return %y : tensor<256xbf16>
}

// RUN: fp8-opt %s -split-input-file -fp8-lower-quantize="chip=sm_90a strict=true" -verify-diagnostics
// Without strict, what no kernel takes stays as it is.
// RUN: fp8-opt %s -split-input-file -fp8-lower-quantize=chip=sm_90a | FileCheck %s

// CHECK-LABEL: func.func @dynamic
// CHECK: fp8.quantize
func.func @dynamic(%x: tensor<?x512xbf16>) -> (tensor<?x512xf8E4M3FN>, tensor<?x4xf32>) {
  // expected-error @+1 {{the quantization kernels are built per static shape}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>}
      : tensor<?x512xbf16> -> rowwise(tensor<?x512xf8E4M3FN>, tensor<?x4xf32>)
  return %q, %s : tensor<?x512xf8E4M3FN>, tensor<?x4xf32>
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

func.func @row_granularity(%x: tensor<128x256xbf16>) -> (tensor<128x256xf8E4M3FN>, tensor<128x1xf32>) {
  // expected-error @+1 {{row granularity has no quantization kernel yet}}
  %q, %s = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<row>}
      : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x1xf32>)
  return %q, %s : tensor<128x256xf8E4M3FN>, tensor<128x1xf32>
}

// -----

func.func @fused_current(%x: tensor<128x256xbf16>) -> (tensor<128x256xf8E4M3FN>, tensor<f32>) {
  // expected-error @+1 {{needs a grid-wide amax first: run fp8-decompose-quantize}}
  %q, %s = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>}
      : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<f32>)
  return %q, %s : tensor<128x256xf8E4M3FN>, tensor<f32>
}

// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-quantize -verify-diagnostics

// A batch whose matrices are not whole 128x128 tiles: a tile of the cast's
// [G * R, C] matrix would cross two experts.
func.func @partial_tiles(%w: tensor<4x200x384xbf16>) -> tensor<4x200x384xf8E4M3FN> {
  // expected-error @+1 {{the quantization kernels take a batch of matrices [G, R, C] in 128x128 tiles with static R and C multiples of 128 (no tile crosses two matrices) and a transposed columnwise output, got 'tensor<4x200x384xbf16>' in tile 128x128}}
  %q, %s = fp8.quantize %w {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>}
      : tensor<4x200x384xbf16> -> rowwise(tensor<4x200x384xf8E4M3FN>, tensor<4x2x3xf32>)
  return %q : tensor<4x200x384xf8E4M3FN>
}

// -----

func.func @untransposed(%w: tensor<4x256x384xbf16>) -> tensor<4x256x384xf8E4M3FN> {
  // expected-error @+1 {{the quantization kernels take a batch of matrices [G, R, C] in 128x128 tiles}}
  %q, %s = fp8.quantize %w {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>,
                            columnwise_layout = #fp8.columnwise_layout<untransposed>}
      : tensor<4x256x384xbf16> -> columnwise(tensor<4x256x384xf8E4M3FN>, tensor<4x3x2xf32>)
  return %q : tensor<4x256x384xf8E4M3FN>
}

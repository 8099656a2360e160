// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-quantize=strict=true -verify-diagnostics

// Rows of C values are stored 16 bytes at a time.
func.func @cols(%x: tensor<4x12xf32>) -> tensor<4x12xbf16> {
  // expected-error @+1 {{the conversion kernels take C (the last dimension) a multiple of 8 (16-byte stores of the converted rows), got 12: pad C to a multiple of 8}}
  %y = arith.truncf %x : tensor<4x12xf32> to tensor<4x12xbf16>
  return %y : tensor<4x12xbf16>
}

// -----

// The kernels round to nearest even only.
func.func @rounding(%x: tensor<4x16xf32>) -> tensor<4x16xbf16> {
  // expected-error @+1 {{the conversion kernels round to nearest even, got rounding mode 'toward_zero': drop the rounding mode}}
  %y = arith.truncf %x toward_zero : tensor<4x16xf32> to tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}

// -----

// A matrix, as every elementwise kernel takes.
func.func @rank(%x: tensor<2x4x16xf32>) -> tensor<2x4x16xbf16> {
  // expected-error @+1 {{the conversion kernels take 2-D inputs, got rank 3: reshape the tensor to a matrix [R, C] (tensor.collapse_shape) first}}
  %y = arith.truncf %x : tensor<2x4x16xf32> to tensor<2x4x16xbf16>
  return %y : tensor<2x4x16xbf16>
}

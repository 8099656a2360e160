// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-lower-quantize=strict=true -verify-diagnostics

// A CTA covers 128 rows, a whole number of tiles: other tile heights are
// reported.
func.func @tile_rows(%s: tensor<4x2xf8E8M0FNU>) -> tensor<384x8xf8E8M0FNU> {
  // expected-error @+1 {{the scale conversion kernel takes tiles whose row count divides 128, got tile 96x128}}
  %0 = fp8.scales_to_mx %s {granularity = #fp8.granularity<tile 96x128>} : tensor<4x2xf8E8M0FNU> -> tensor<384x8xf8E8M0FNU>
  return %0 : tensor<384x8xf8E8M0FNU>
}

// -----

// f32 grids are read in the quantization kernels' layouts, which exist for
// 1x128 and 128x128 tiles.
func.func @f32_tile(%s: tensor<8x4xf32>) -> tensor<8x8xf8E8M0FNU> {
  // expected-error @+1 {{the scale conversion kernel reads f32 scales in the layouts of 1x128 and 128x128 tiles (as the quantization kernels write them), got tile 1x64}}
  %0 = fp8.scales_to_mx %s {granularity = #fp8.granularity<tile 1x64>} : tensor<8x4xf32> -> tensor<8x8xf8E8M0FNU>
  return %0 : tensor<8x8xf8E8M0FNU>
}

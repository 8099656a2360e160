// RUN: fp8-opt %s -split-input-file -fp8-lower-quantize="chip=sm_100a strict=true" -verify-diagnostics

// A CTA covers 128 rows, a whole number of tiles: other tile heights are
// reported.
func.func @tile_rows(%s: tensor<4x2xf32>) -> tensor<384x8xf8E8M0FNU> {
  // expected-error @+1 {{the scale conversion kernel takes tiles whose row count divides 128, got tile 96x128}}
  %0 = fp8.scales_to_mx %s {granularity = #fp8.granularity<tile 96x128>} : tensor<4x2xf32> -> tensor<384x8xf8E8M0FNU>
  return %0 : tensor<384x8xf8E8M0FNU>
}

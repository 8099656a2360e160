// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-verify-target -verify-diagnostics
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-verify-target | FileCheck %s --check-prefix=SM100

// A grouped MXFP8 GEMM needs sm_100a's block-scaled MMA.
// SM100-LABEL: func.func @grouped_mxfp8
// SM100: fp8.grouped_scaled_matmul
func.func @grouped_mxfp8(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<?x16xf8E8M0FNU>, %sb: tensor<2x256x16xf8E8M0FNU>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  // expected-error @+2 {{MXFP8 (mx 1x32, UE8M0 scales) needs block-scaled tensor-core MMA, which sm_90a does not have}}
  // expected-note @+1 {{quantize with #fp8.blockwise or #fp8.current for sm_90a, or target sm_100a}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x16xf8E8M0FNU>, tensor<2x256x16xf8E8M0FNU>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-lower-scaled-matmul -verify-diagnostics

func.func @sm100(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<?x1xf32>, %sb: tensor<2x256x1xf32>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{grouped GEMMs have sm_90a kernels only, not sm_100a ones}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x1xf32>, tensor<2x256x1xf32>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// -----

func.func @sm100_masked(%a: tensor<2x?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %c: tensor<2xi32>) -> tensor<2x?x256xbf16> {
  // expected-error @+1 {{grouped GEMMs have sm_90a kernels only, not sm_100a ones}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %c {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<2x?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2x?x256xbf16>
  return %d : tensor<2x?x256xbf16>
}

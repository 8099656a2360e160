// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-lower-scaled-matmul -verify-diagnostics

// Blockwise f32 scales: the block-scaled MMA takes UE8M0 ones (the
// pipeline converts f32 power-of-two scales for dense GEMMs only).
func.func @blockwise_f32(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<?x4xf32>, %sb: tensor<2x2x4xf32>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{the sm_100a grouped kernels run blockwise GEMMs on the block-scaled MMA and take their A scales as f8E8M0FNU (powers of two, in the MX atom layout of the kernel metadata), got 'tensor<?x4xf32>': run f32 blockwise scales on sm_90a}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x4xf32>, tensor<2x2x4xf32>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// -----

// The cta_group::2 pair's 256 rows would span two groups.
func.func @cta_pair(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<?x1xf32>, %sb: tensor<2x256x1xf32>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{the grouped GEMM kernels take tile M dividing 128 (the groups' row alignment), no 2x1 cluster and no stream-K; got tile M 256, cluster 2x1}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 256x256x128, stages = 4, cluster = 2x1>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x1xf32>, tensor<2x256x1xf32>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// -----

func.func @mx_tile_n(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<?x16xf8E8M0FNU>, %sb: tensor<2x256x16xf8E8M0FNU>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{the sm_100a MXFP8 kernels take tile N a multiple of 128 (whole 128-row scale-factor atoms), got 64}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x64x128, stages = 4>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x16xf8E8M0FNU>, tensor<2x256x16xf8E8M0FNU>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// -----

func.func @stream_k(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{the sm_100a kernels have no stream-K schedule: drop `stream_k = true` from the gemm_config}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x256x128, stages = 4, stream_k = true>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// -----

func.func @sm100_masked(%a: tensor<2x?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %c: tensor<2xi32>) -> tensor<2x?x256xbf16> {
  // expected-error @+1 {{the sm_100a grouped kernels take the m_contiguous layout only, not m_masked (its kernels are sm_90a ones)}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %c {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<2x?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2x?x256xbf16>
  return %d : tensor<2x?x256xbf16>
}

// -----

func.func @sm100_k_grouped(%a: tensor<256x?xf8E4M3FN>, %b: tensor<512x?xf8E4M3FN>, %sa: tensor<3xf32>, %sb: tensor<3xf32>, %g: tensor<3xi32>) -> tensor<3x256x512xbf16> {
  // expected-error @+1 {{the sm_100a grouped kernels take the m_contiguous layout only, not k_grouped (its kernels are sm_90a ones)}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x?xf8E4M3FN>, tensor<512x?xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3x256x512xbf16>
  return %d : tensor<3x256x512xbf16>
}

// -----

// FP8 results: the sm_100a epilogue writes bf16, f16 or f32 only (the
// sm_90a grouped kernels quantize in theirs).
func.func @fp8_result_delayed(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>, %qs: tensor<f32>) -> (tensor<?x256xf8E4M3FN>, tensor<f32>) {
  // expected-error @+1 {{the sm_100a grouped kernels write a bf16, f16 or f32 result, got 'tensor<?x256xf8E4M3FN>': produce an f32 result and quantize the rows of each group, or run the FP8 result on sm_90a}}
  %d, %s = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g result_scale %qs {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.delayed<>, result_granularity = #fp8.granularity<tensor>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<?xi32>, tensor<f32>) -> (tensor<?x256xf8E4M3FN>, tensor<f32>)
  return %d, %s : tensor<?x256xf8E4M3FN>, tensor<f32>
}

// -----

func.func @fp8_result_1x128(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<?x16xf8E8M0FNU>, %sb: tensor<2x256x16xf8E8M0FNU>, %g: tensor<?xi32>) -> (tensor<?x256xf8E4M3FN>, tensor<?x2xf32>) {
  // expected-error @+1 {{the sm_100a grouped kernels write a bf16, f16 or f32 result, got 'tensor<?x256xf8E4M3FN>'}}
  %d, %s = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x16xf8E8M0FNU>, tensor<2x256x16xf8E8M0FNU>, tensor<?xi32>) -> (tensor<?x256xf8E4M3FN>, tensor<?x2xf32>)
  return %d, %s : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>
}

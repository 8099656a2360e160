// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul -verify-diagnostics

func.func @dynamic_groups(%a: tensor<?x512xf8E4M3FN>, %b: tensor<?x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<?xf32>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{expected a static group count G (B is [G, N, K]; one kernel is built per G, N and K)}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x512xf8E4M3FN>, tensor<?x256x512xf8E4M3FN>, tensor<f32>, tensor<?xf32>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// -----

func.func @k_alignment(%a: tensor<?x100xf8E4M3FN>, %b: tensor<2x256x100xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{expected N and K to be multiples of 16 (TMA needs 16-byte aligned row strides), got N = 256, K = 100}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x100xf8E4M3FN>, tensor<2x256x100xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// -----

func.func @cluster(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{the grouped GEMM kernels take tile M dividing 128 (the groups' row alignment), no 2x1 cluster and no stream-K; got tile M 128, cluster 2x1}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x128x128, stages = 4, cluster = 2x1>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// -----

func.func @promote_interval(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<?x4xf32>, %sb: tensor<2x2x4xf32>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{the GEMM kernels promote every 128 K elements: expected accumulation fast or promoted(128), got promoted(64)}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(64)>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x4xf32>, tensor<2x2x4xf32>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// -----

func.func @k_grouped_dynamic_n(%a: tensor<256x?xf8E4M3FN>, %b: tensor<?x?xf8E4M3FN>, %sa: tensor<3xf32>, %sb: tensor<3xf32>, %g: tensor<3xi32>) -> tensor<3x256x?xbf16> {
  // expected-error @+1 {{expected a static N, a multiple of 16 (one k_grouped kernel is built per N; M and K may be dynamic), got N = ?}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x?xf8E4M3FN>, tensor<?x?xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3x256x?xbf16>
  return %d : tensor<3x256x?xbf16>
}

// -----

// FP8 results whose scales reduce over more than one tile: no two phases
// for grouped GEMMs (the f32 D's unwritten rows would be read).
func.func @fp8_result_current_tensor(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>) -> (tensor<?x256xf8E4M3FN>, tensor<f32>) {
  // expected-error @+1 {{the grouped GEMM kernels quantize an FP8 result per tensor with a given result_scale or in 1x128 blocks along N (#fp8.blockwise), got #fp8.current<> at tensor, whose scales reduce over more than one tile: produce an f32 result and quantize the rows of each group}}
  %d, %s = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.current<>, result_granularity = #fp8.granularity<tensor>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<?xi32>) -> (tensor<?x256xf8E4M3FN>, tensor<f32>)
  return %d, %s : tensor<?x256xf8E4M3FN>, tensor<f32>
}

// -----

func.func @k_grouped_n_alignment(%a: tensor<256x?xf8E4M3FN>, %b: tensor<200x?xf8E4M3FN>, %sa: tensor<3xf32>, %sb: tensor<3xf32>, %g: tensor<3xi32>) -> tensor<3x256x200xbf16> {
  // expected-error @+1 {{expected a static N, a multiple of 16 (one k_grouped kernel is built per N; M and K may be dynamic), got N = 200}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<256x?xf8E4M3FN>, tensor<200x?xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3x256x200xbf16>
  return %d : tensor<3x256x200xbf16>
}

// -----

func.func @k_grouped_cluster(%a: tensor<256x?xf8E4M3FN>, %b: tensor<512x?xf8E4M3FN>, %sa: tensor<3xf32>, %sb: tensor<3xf32>, %g: tensor<3xi32>) -> tensor<3x256x512xbf16> {
  // expected-error @+1 {{the grouped GEMM kernels take tile M dividing 128 (the groups' row alignment), no 2x1 cluster and no stream-K; got tile M 128, cluster 2x1}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x128x128, stages = 4, cluster = 2x1>} : (tensor<256x?xf8E4M3FN>, tensor<512x?xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3x256x512xbf16>
  return %d : tensor<3x256x512xbf16>
}

// -----

// The CTAs of a 2x1 cluster would hold two tile rows of one B tile: no
// grouped layout takes it (a masked group's pair of tile rows included).
func.func @masked_cluster(%a: tensor<2x?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<2x?x4xf32>, %sb: tensor<2x2x4xf32>, %m: tensor<2xi32>) -> tensor<2x?x256xbf16> {
  // expected-error @+1 {{the grouped GEMM kernels take tile M dividing 128 (the groups' row alignment), no 2x1 cluster and no stream-K; got tile M 128, cluster 2x1}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %m {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 5, cluster = 2x1>} : (tensor<2x?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<2x?x4xf32>, tensor<2x2x4xf32>, tensor<2xi32>) -> tensor<2x?x256xbf16>
  return %d : tensor<2x?x256xbf16>
}

// -----

func.func @fp8_result_rowwise(%a: tensor<2x?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<2xf32>, %m: tensor<2xi32>) -> (tensor<2x?x256xf8E4M3FN>, tensor<2x?x1xf32>) {
  // expected-error @+1 {{got #fp8.current<> at row, whose scales reduce over more than one tile}}
  %d, %s = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %m {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.current<>, result_granularity = #fp8.granularity<row>} : (tensor<2x?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<2xi32>) -> (tensor<2x?x256xf8E4M3FN>, tensor<2x?x1xf32>)
  return %d, %s : tensor<2x?x256xf8E4M3FN>, tensor<2x?x1xf32>
}

// -----

// UE8M0 blockwise scales run on sm_100a's block-scaled MMA only.
func.func @ue8m0_blockwise(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<?x4xf8E8M0FNU>, %sb: tensor<2x2x4xf8E8M0FNU>, %g: tensor<?xi32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{the sm_90a grouped kernels read blockwise scales as f32, got 'tensor<?x4xf8E8M0FNU>'}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x4xf8E8M0FNU>, tensor<2x2x4xf8E8M0FNU>, tensor<?xi32>) -> tensor<?x256xbf16>
  return %d : tensor<?x256xbf16>
}

// -----

// A 1x2 cluster shares an A tile: m_contiguous and m_masked only.
func.func @k_grouped_cluster_1x2(%a: tensor<256x?xf8E4M3FN>, %b: tensor<512x?xf8E4M3FN>, %sa: tensor<3xf32>, %sb: tensor<3xf32>, %g: tensor<3xi32>) -> tensor<3x256x512xbf16> {
  // expected-error @+1 {{a 1x2 cluster (A multicast) takes neither 1x128 B scales nor a k_grouped GEMM}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x128x128, stages = 4, cluster = 1x2>} : (tensor<256x?xf8E4M3FN>, tensor<512x?xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3x256x512xbf16>
  return %d : tensor<3x256x512xbf16>
}

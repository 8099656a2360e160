// The chip rows of the input contract for sm_100a (docs/contract.md): what
// its tcgen05 kernels do not run, reported by fp8-verify-target.
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-verify-target -verify-diagnostics

// Blockwise GEMMs run on the block-scaled MMA: scales must be powers of two.
func.func @blockwise_f32_scales(%a: tensor<128x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %sb: tensor<1x2xf32>) -> tensor<128x128xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op blockwise f32 scales cannot use the block-scaled MMA without requantizing; the sm_100a lowering does not rescale per 128-K block on CUDA cores: quantize with #fp8.blockwise<scales = pow2> (or #fp8.mxfp8), or run on sm_90a}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<scales = f32>} : (tensor<128x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<1x2xf32>) -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

// -----

func.func @linear_blockwise_f32(%x: tensor<?x1024xbf16>, %w: tensor<2048x1024xbf16>) -> tensor<?x2048xbf16> {
  // expected-error @+1 {{'fp8.linear' op sm_100a runs blockwise GEMMs on the block-scaled MMA, which takes power-of-two scales: use #fp8.blockwise<scales = pow2> (the default) there, or run scales = f32 on sm_90a}}
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<scales = f32>} : (tensor<?x1024xbf16>, tensor<2048x1024xbf16>) -> tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}

// -----

func.func @config_tile_m_64(%a: tensor<?x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op the sm_100a kernels take tile M 128 (cta_group::1, one TMEM lane per row) or 256 with cluster = 2x1 (cta_group::2), got 64}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 64x128x128>} : (tensor<?x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// -----

func.func @config_ping_pong(%a: tensor<?x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op the sm_100a kernels have no ping-pong schedule (one thread issues a tile's MMAs into tensor memory): drop `ping_pong = true` from the gemm_config}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x128x128, ping_pong = true>} : (tensor<?x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// -----

func.func @config_stream_k(%a: tensor<?x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op the sm_100a kernels have no stream-K schedule: drop `stream_k = true` from the gemm_config}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x128x128, stream_k = true>} : (tensor<?x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// The chip rows of the input contract for sm_90a (docs/contract.md): what
// its wgmma kernels do not run, reported by fp8-verify-target.
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-verify-target -verify-diagnostics

func.func @linear_mxfp8(%x: tensor<?x1024xbf16>, %w: tensor<2048x1024xbf16>) -> tensor<?x2048xbf16> {
  // expected-error @+1 {{'fp8.linear' op MXFP8 needs the block-scaled MMA of sm_100a; sm_90a has none (use #fp8.blockwise or a per-tensor recipe there)}}
  %y = fp8.linear %x, %w {recipe = #fp8.mxfp8<>} : (tensor<?x1024xbf16>, tensor<2048x1024xbf16>) -> tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}

// -----

func.func @config_ping_pong_tile_m_256(%a: tensor<?x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op ping_pong gives each consumer warpgroup whole tiles of its own: it takes fast accumulation, a tile of 64 or 128 rows whose sums fit in 128 registers per thread (tile M x N <= 16384), neither stream-K nor a grouped GEMM; got tile 256x128}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 256x128x128, stages = 4, ping_pong = true>} : (tensor<?x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// -----

func.func @config_shared_memory(%a: tensor<?x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x256xbf16> {
  // expected-error-re @+1 {{'fp8.scaled_matmul' op the kernel configuration needs {{[0-9]+}} bytes of shared memory, more than the {{[0-9]+}} sm_90a offers: use fewer stages or a smaller tile}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x256x128, stages = 16>} : (tensor<?x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// -----

// Scale tensors are indexed in 32 bits in the layout the kernels read: a
// 1x128 a_scale_inv of M = 128 and K = 2^31 - 16 holds 2^31 elements.
func.func @a_scales_beyond_32_bits(%a: tensor<128x2147483632xf8E4M3FN>, %b: tensor<128x2147483632xf8E4M3FN>, %sa: tensor<128x16777216xf32>, %sb: tensor<1x16777216xf32>) -> tensor<128x128xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op a_scale_inv holds more than 2^31 - 1 = 2147483647 elements in the layout the kernels read (M = 128, K = 2147483632; 32-bit scale offsets): split the GEMM along M, or along K and add the parts}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<128x2147483632xf8E4M3FN>, tensor<128x2147483632xf8E4M3FN>, tensor<128x16777216xf32>, tensor<1x16777216xf32>) -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

// -----

// The same for B: 128x128 tiles of N = K = 2^31 - 16 are 2^48 scales.
func.func @b_scales_beyond_32_bits(%a: tensor<4x2147483632xf8E4M3FN>, %b: tensor<2147483632x2147483632xf8E4M3FN>, %sa: tensor<4x16777216xf32>, %sb: tensor<16777216x16777216xf32>) -> tensor<4x2147483632xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op b_scale_inv holds more than 2^31 - 1 = 2147483647 elements in the layout the kernels read (N = 2147483632, K = 2147483632; 32-bit scale offsets): split the GEMM along N, or along K and add the parts}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<4x2147483632xf8E4M3FN>, tensor<2147483632x2147483632xf8E4M3FN>, tensor<4x16777216xf32>, tensor<16777216x16777216xf32>) -> tensor<4x2147483632xbf16>
  return %0 : tensor<4x2147483632xbf16>
}

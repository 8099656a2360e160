// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul -verify-diagnostics

func.func @mn_major(%a: tensor<256x128xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{sm_90a reads FP8 MMA operands K-major only (TN): run fp8-verify-target for the fix}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, a_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<256x128xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @dynamic_k(%a: tensor<128x?xf8E4M3FN>, %b: tensor<64x?xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{expected static N and K (one kernel is built per N and K; M may be dynamic)}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x?xf8E4M3FN>, tensor<64x?xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @k_alignment(%a: tensor<128x100xf8E4M3FN>, %b: tensor<64x100xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{expected N and K to be multiples of 16 (TMA needs 16-byte aligned row strides), got N = 64, K = 100}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x100xf8E4M3FN>, tensor<64x100xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @blockwise_b_64x128(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %sb: tensor<1x2xf32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{the GEMM kernels take blockwise B scales in 128x128 or 1x128 tiles, got tile 64x128}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 64x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<128x2xf32>, tensor<1x2xf32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @blockwise_a_2d(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<1x2xf32>, %sb: tensor<64x2xf32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{the GEMM kernels take blockwise A scales in 1x128 tiles, got tile 128x128}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 128x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<1x2xf32>, tensor<64x2xf32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @promote_interval(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{the GEMM kernels promote every 128 K elements: expected accumulation fast or promoted(128), got promoted(64)}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(64)>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @tile_m(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{the sm_90a kernels take tile M 64 or 128 (one or two consumer warpgroups) or 256 (two consumer warpgroups of two 64-row waves), got 192}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 192x128x128>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @blockwise_tile_n(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %sb: tensor<2x2xf32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{the sm_90a blockwise kernels take the 128x128 B scales of at most two B blocks per tile: expected tile N <= 128 + gcd(tile N, 128), got 176}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x176x128>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<128x2xf32>, tensor<2x2xf32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

func.func @promote_tile_n(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{promoted accumulation keeps two f32 accumulators of tile N / 2 registers per thread: expected tile N <= 192, or 256 in waves of 128 columns (tile M 64 or 128, one promotion part, 128x128 or coarser B scales), got 128x224}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x224x128>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

func.func @promote_column_waves_two_parts(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{expected tile N <= 192, or 256 in waves of 128 columns (tile M 64 or 128, one promotion part, 128x128 or coarser B scales), got 128x256 in two promotion parts}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x256x128, promotion_parts = 2>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

func.func @promote_column_waves_1d1d(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %sb: tensor<256x2xf32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{got 128x256 with 1x128 B scales}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x256x128>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x2xf32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

func.func @cluster(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %sb: tensor<256x2xf32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{a 1x2 cluster (A multicast) takes neither 1x128 B scales nor a k_grouped GEMM}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, cluster = 1x2>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x2xf32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

func.func @wave_tile_n(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{a 256-row tile keeps the sums of two 64-row waves per consumer thread: it takes 128x128 or coarser B scales and tile N <= 128, got tile N 192}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 256x192x128, stages = 2>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

func.func @wave_tile_column_scales(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %sb: tensor<256x2xf32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{a 256-row tile keeps the sums of two 64-row waves per consumer thread: it takes 128x128 or coarser B scales and tile N <= 128, got 1x128 B scales}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 256x128x128, stages = 3>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x2xf32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

func.func @wave_tile_stream_k(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{a 256-row tile takes neither stream-K nor a grouped GEMM}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 256x128x128, stages = 3, stream_k = true>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

func.func @cluster_halves(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{a 2x1 cluster splits the B tile in halves of whole 8-row core matrices: expected tile N a multiple of 16, got 24}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x24x128, cluster = 2x1>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

func.func @shared_memory(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{the kernel configuration needs 458880 bytes of shared memory, more than the 232448 sm_90a offers: use fewer stages or a smaller tile}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x256x128, stages = 8>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

func.func @mxfp8(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<128x8xf8E8M0FNU>, %sb: tensor<64x8xf8E8M0FNU>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{MXFP8 scales need the block-scaled MMA of sm_100a (run fp8-verify-target first)}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>, tensor<64x8xf8E8M0FNU>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @promotion_parts_fast(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{promotion_parts selects the column parts of promoted accumulation in a 64-, 128- or 256-row tile, got fast accumulation}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x128x128, stages = 4, promotion_parts = 1>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

func.func @promotion_parts_narrow(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{two promotion parts need tile N >= 64 (parts of whole 32-column MMAs), got 32}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x32x128, stages = 4, promotion_parts = 2>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

func.func @ping_pong_promoted(%a: tensor<?x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{ping_pong gives each consumer warpgroup whole tiles of its own: it takes fast accumulation, a tile of 64 or 128 rows whose sums fit in 128 registers per thread (tile M x N <= 16384), neither stream-K nor a grouped GEMM; got promoted accumulation}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 5, ping_pong = true>} : (tensor<?x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// -----

func.func @ping_pong_tile(%a: tensor<?x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{ping_pong gives each consumer warpgroup whole tiles of its own: it takes fast accumulation, a tile of 64 or 128 rows whose sums fit in 128 registers per thread (tile M x N <= 16384), neither stream-K nor a grouped GEMM; got tile 128x192}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x192x128, stages = 4, ping_pong = true>} : (tensor<?x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

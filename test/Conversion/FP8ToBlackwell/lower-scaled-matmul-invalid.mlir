// RUN: fp8-opt %s -split-input-file -verify-diagnostics -fp8-attach-target=chip=sm_100a -fp8-lower-scaled-matmul

// What the sm_100a (tcgen05) lowering does not take yet, or cannot.

// MX scales come in whole 128-row scale-factor atoms per tile.
func.func @mxfp8_tile_n(%a: tensor<128x256xf8E4M3FN>, %b: tensor<192x256xf8E4M3FN>, %sa: tensor<128x8xf8E8M0FNU>, %sb: tensor<192x8xf8E8M0FNU>) -> tensor<128x192xbf16> {
  // expected-error @+1 {{the sm_100a MXFP8 kernels take tile N a multiple of 128 (whole 128-row scale-factor atoms), got 192}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x192x128, stages = 3>} : (tensor<128x256xf8E4M3FN>, tensor<192x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>, tensor<192x8xf8E8M0FNU>) -> tensor<128x192xbf16>
  return %0 : tensor<128x192xbf16>
}

// -----

func.func @mxfp8_shared_memory(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %sa: tensor<128x8xf8E8M0FNU>, %sb: tensor<256x8xf8E8M0FNU>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{the kernel configuration needs 268392 bytes of shared memory}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x256x128, stages = 4>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>, tensor<256x8xf8E8M0FNU>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

// Blockwise scales run on the block-scaled MMA only as powers of two: f32
// scales of a `scales = f32` recipe would need requantized data.
func.func @blockwise_f32_recipe(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %sb: tensor<2x2xf32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{blockwise f32 scales cannot use the block-scaled MMA without requantizing; the sm_100a lowering does not rescale per 128-K block on CUDA cores}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<scales = f32>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<128x2xf32>, tensor<2x2xf32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

// f32 blockwise scales with no recipe may not be powers of two.
func.func @blockwise_f32_no_recipe(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %sb: tensor<2x2xf32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{the sm_100a block-scaled MMA takes blockwise A scales as f8E8M0FNU, or as f32 under a #fp8.blockwise<scales = pow2> recipe}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<128x2xf32>, tensor<2x2xf32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

func.func @blockwise_mixed(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %sa: tensor<128x2xf8E8M0FNU>, %sb: tensor<2x2xf32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{the sm_100a block-scaled MMA takes blockwise B scales as f8E8M0FNU}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<128x2xf8E8M0FNU>, tensor<2x2xf32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

// Blockwise as MX also takes whole 128-row scale-factor atoms per tile.
func.func @blockwise_tile_n(%a: tensor<128x256xf8E4M3FN>, %b: tensor<192x256xf8E4M3FN>, %sa: tensor<128x2xf8E8M0FNU>, %sb: tensor<2x2xf8E8M0FNU>) -> tensor<128x192xbf16> {
  // expected-error @+1 {{the sm_100a MXFP8 kernels take tile N a multiple of 128 (whole 128-row scale-factor atoms), got 192}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x192x128, stages = 3>} : (tensor<128x256xf8E4M3FN>, tensor<192x256xf8E4M3FN>, tensor<128x2xf8E8M0FNU>, tensor<2x2xf8E8M0FNU>) -> tensor<128x192xbf16>
  return %0 : tensor<128x192xbf16>
}

// -----

func.func @tile_m(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{the sm_100a kernels take tile M 128 (cta_group::1, one TMEM lane per row) or 256 with cluster = 2x1 (cta_group::2), got 64}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 64x64x128>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @tile_n(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{the sm_100a kernels take tile N a multiple of 16 in [16, 256] (two epilogue warpgroups of whole 8-column groups), got 24}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x24x128>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @cluster(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{the sm_100a kernels take cluster = 2x1 only with tile M 256 (the cta_group::2 CTA pair); tile M 128 takes no cluster, got 2x1}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x256x128, stages = 3, cluster = 2x1>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

// An MN-major B tile is whole 128-element swizzle atoms along N.
func.func @mn_major_tile_n(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x192xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x192xbf16> {
  // expected-error @+1 {{the MN-major B tile (192 x 128, 128-byte swizzle) cannot feed tcgen05.mma:}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x192x128, stages = 3>} : (tensor<128x256xf8E4M3FN>, tensor<256x192xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x192xbf16>
  return %0 : tensor<128x192xbf16>
}

// -----

func.func @shared_memory(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{the kernel configuration needs 458920 bytes of shared memory, more than the 232448 sm_100a offers}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x256x128, stages = 8>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

// Tile M 256 is the cta_group::2 CTA pair: it needs a 2x1 cluster.
func.func @pair_without_cluster(%a: tensor<256x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<256x256xbf16> {
  // expected-error @+1 {{the sm_100a tile M 256 is the cta_group::2 variant: it needs cluster = 2x1 (a CTA pair, 128 rows each), got 1x1}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 256x256x128, stages = 3>} : (tensor<256x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x256xbf16>
  return %0 : tensor<256x256xbf16>
}

// -----

func.func @pair_wrong_cluster(%a: tensor<256x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<256x256xbf16> {
  // expected-error @+1 {{the sm_100a tile M 256 is the cta_group::2 variant: it needs cluster = 2x1 (a CTA pair, 128 rows each), got 1x2}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 256x256x128, stages = 3, cluster = 1x2>} : (tensor<256x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<256x256xbf16>
  return %0 : tensor<256x256xbf16>
}

// -----

// The CTA pair runs kind::f8f6f4 only: MX scales take tile M 128.
func.func @pair_mxfp8(%a: tensor<256x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %sa: tensor<256x8xf8E8M0FNU>, %sb: tensor<256x8xf8E8M0FNU>) -> tensor<256x256xbf16> {
  // expected-error @+1 {{the sm_100a cta_group::2 variant (tile M 256, cluster 2x1) takes kind::f8f6f4 (per-tensor or row-wise scales) only}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 256x256x128, stages = 3, cluster = 2x1>} : (tensor<256x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<256x8xf8E8M0FNU>, tensor<256x8xf8E8M0FNU>) -> tensor<256x256xbf16>
  return %0 : tensor<256x256xbf16>
}

// -----

// Stream-K is a sm_90a schedule.
func.func @stream_k(%a: tensor<?x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{the sm_100a kernels have no stream-K schedule: drop `stream_k = true` from the gemm_config}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x256x128, stream_k = true>} : (tensor<?x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

// -----

// Promotion parts are a sm_90a choice: tcgen05 accumulates in f32.
func.func @promotion_parts(%a: tensor<?x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x256xbf16> {
  // expected-error @+1 {{the sm_100a kernels accumulate in f32 tensor memory, with no promotion: remove `promotion_parts` from the gemm_config}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x256x128, promotion_parts = 1>} : (tensor<?x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x256xbf16>
  return %0 : tensor<?x256xbf16>
}

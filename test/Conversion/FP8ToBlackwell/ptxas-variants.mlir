// Every sm_100a (tcgen05) kernel variant the lowering produces assembles
// with `ptxas -arch=sm_100a`, with no register spills: recipes (per-tensor,
// row-wise), dtypes, outputs (staged TMA stores, direct f32 stores,
// accumulate-into-C), bias, tile N 256/224/192/64, and the TN/NN/NT/NN-both
// operand majors; MXFP8 (block-scaled MMA, scales by TMA + tcgen05.cp) TN,
// NN and NT; blockwise power-of-two scales (1x128 x 128x128, and the wgrad
// 1x128 x 1x128 with MN-major operands) as MX (fp8-blockwise-to-mx in the
// pipeline: the MXFP8 kernel); the cta_group::2 CTA pair (tile 256xN,
// cluster 2x1).
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: fp8-compile %s --chip=sm_100a -o %t
// Each .ptx holds the whole kernel module (all 19 entries): ptxas_report.py
// checks that every file assembles; ptxas -v on one of them reports every
// entry's resources, each of which must be spill-free.
// RUN: %python %fp8_src_root/test/lit-tools/ptxas_report.py %ptxas sm_100a %t | FileCheck %s --check-prefix=REPORT
// RUN: %ptxas -arch=sm_100a -v %t/fp8_gemm_tensorwise_e4m3_e4m3_bf16_n7168_k2048_t128x256x128_s3_fast.ptx -o /dev/null > %t/ptxas.log 2>&1
// RUN: FileCheck %s --check-prefix=ENTRIES < %t/ptxas.log
// RUN: FileCheck %s --check-prefix=SPILLS < %t/ptxas.log
// RUN: FileCheck %s --check-prefix=MXPTX < %t/fp8_gemm_mxfp8_e4m3_e4m3_bf16_n7168_k2048_t128x256x128_s3_fast.ptx
// RUN: FileCheck %s --check-prefix=PAIRPTX < %t/fp8_gemm_tensorwise_e4m3_e4m3_bf16_n7168_k2048_t256x256x128_s4_c2x1_fast.ptx
// REPORT: 19 kernels assembled, 0 with spills, 0 with wgmma serialization warnings, 0 failed
// ENTRIES-DAG: entry function 'fp8_gemm_tensorwise_e4m3_e4m3_bf16_n7168_k2048_t128x256x128_s3_fast' for 'sm_100a'
// ENTRIES-DAG: entry function 'fp8_gemm_rowwise_e5m2_e4m3_f32_n2112_k4096_t128x192x128_s5_fast_acc' for 'sm_100a'
// ENTRIES-DAG: entry function 'fp8_gemm_rowwise_e4m3_e4m3_bf16_n2112_k7168_t128x192x128_s4_fast_bias' for 'sm_100a'
// ENTRIES-DAG: entry function 'fp8_gemm_tensorwise_e4m3_e4m3_f32_n4480_k1024_t128x224x128_s5_fast' for 'sm_100a'
// ENTRIES-DAG: entry function 'fp8_gemm_tensorwise_e4m3_e4m3_f16_n4096_k4096_t128x64x128_s4_fast' for 'sm_100a'
// ENTRIES-DAG: entry function 'fp8_gemm_tensorwise_e4m3_e5m2_bf16_n4096_k2048_t128x256x128_s3_fast_bias_amn' for 'sm_100a'
// ENTRIES-DAG: entry function 'fp8_gemm_tensorwise_e4m3_e4m3_bf16_n4096_k2048_t128x256x128_s3_fast_bmn' for 'sm_100a'
// ENTRIES-DAG: entry function 'fp8_gemm_rowwise_e4m3_e4m3_f32_n2048_k2048_t128x256x128_s4_fast_acc_amn_bmn' for 'sm_100a'
// ENTRIES-DAG: entry function 'fp8_gemm_mxfp8_e4m3_e5m2_bf16_n4096_k4096_t128x256x128_s3_fast_bias_amn' for 'sm_100a'
// ENTRIES-DAG: entry function 'fp8_gemm_mxfp8_e4m3_e4m3_f32_n2048_k2048_t128x128x128_s5_bmn' for 'sm_100a'
// ENTRIES-DAG: entry function 'fp8_gemm_mxfp8_e4m3_e4m3_bf16_n7168_k2048_t128x256x128_s3_fast' for 'sm_100a'
// ENTRIES-DAG: entry function 'fp8_gemm_mxfp8_e4m3_e4m3_bf16_n7168_k7168_t128x256x128_s3' for 'sm_100a'
// ENTRIES-DAG: entry function 'fp8_gemm_mxfp8_e4m3_e4m3_f32_n1024_k4096_t128x256x128_s4_acc_amn_bmn' for 'sm_100a'
// ENTRIES-DAG: entry function 'fp8_gemm_rowwise_e4m3_e4m3_bf16_n2112_k2048_t128x192x128_s4_fast_gelu_amax' for 'sm_100a'
// SPILLS-NOT: error
// ENTRIES-DAG: entry function 'fp8_gemm_tensorwise_e4m3_e4m3_bf16_n7168_k2048_t256x256x128_s4_c2x1_fast' for 'sm_100a'
// The blockwise GEMMs' scales (function arguments) as MX atoms: kernels too.
// ENTRIES-DAG: entry function 'fp8_scales_to_mx_f32_1x128_rdyn_b224' for 'sm_100a'
// ENTRIES-DAG: entry function 'fp8_scales_to_mx_f32_128x128_r7168_b224' for 'sm_100a'
// SPILLS-COUNT-19: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// SPILLS-NOT: bytes spill
// PAIRPTX: .entry fp8_gemm_tensorwise_e4m3_e4m3_bf16_n7168_k2048_t256x256x128_s4_c2x1_fast
// PAIRPTX: .reqnctapercluster 2, 1, 1
// PAIRPTX: tcgen05.alloc.cta_group::2
// PAIRPTX: barrier.cluster.arrive
// PAIRPTX: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2
// PAIRPTX: tcgen05.mma.cta_group::2.kind::f8f6f4
// PAIRPTX: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64
// PAIRPTX: tcgen05.dealloc.cta_group::2

func.func @tensorwise(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<7168x2048xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x7168xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x2048xf8E4M3FN>, tensor<7168x2048xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x7168xbf16>
  return %0 : tensor<?x7168xbf16>
}

func.func @rowwise_wgrad(%a: tensor<?x4096xf8E5M2>, %b: tensor<2112x4096xf8E4M3FN>, %sa: tensor<?x1xf32>, %sb: tensor<2112x1xf32>, %c: tensor<?x2112xf32>) -> tensor<?x2112xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>} : (tensor<?x4096xf8E5M2>, tensor<2112x4096xf8E4M3FN>, tensor<?x1xf32>, tensor<2112x1xf32>, tensor<?x2112xf32>) -> tensor<?x2112xf32>
  return %0 : tensor<?x2112xf32>
}

func.func @rowwise_bias(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x1xf32>, %sb: tensor<2112x1xf32>, %bias: tensor<2112xbf16>) -> tensor<?x2112xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb bias %bias {a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x1xf32>, tensor<2112x1xf32>, tensor<2112xbf16>) -> tensor<?x2112xbf16>
  return %0 : tensor<?x2112xbf16>
}

func.func @f32_out(%a: tensor<?x1024xf8E4M3FN>, %b: tensor<4480x1024xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x4480xf32> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x1024xf8E4M3FN>, tensor<4480x1024xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x4480xf32>
  return %0 : tensor<?x4480xf32>
}

func.func @override(%a: tensor<?x4096xf8E4M3FN>, %b: tensor<4096x4096xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x4096xf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x64x128, stages = 4>} : (tensor<?x4096xf8E4M3FN>, tensor<4096x4096xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x4096xf16>
  return %0 : tensor<?x4096xf16>
}

// NN: A stored [K, M].
func.func @a_mn_major(%a: tensor<2048x?xf8E4M3FN>, %b: tensor<4096x2048xf8E5M2>, %s: tensor<f32>, %bias: tensor<4096xf32>) -> tensor<?x4096xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s bias %bias {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, a_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<2048x?xf8E4M3FN>, tensor<4096x2048xf8E5M2>, tensor<f32>, tensor<f32>, tensor<4096xf32>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

// NT: B stored [K, N].
func.func @b_mn_major(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<2048x4096xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x4096xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<?x2048xf8E4M3FN>, tensor<2048x4096xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

func.func @both_mn_major(%a: tensor<2048x?xf8E4M3FN>, %b: tensor<2048x2048xf8E4M3FN>, %sa: tensor<?x1xf32>, %sb: tensor<2048x1xf32>, %c: tensor<?x2048xf32>) -> tensor<?x2048xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, a_major = #fp8.major<mn>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<2048x?xf8E4M3FN>, tensor<2048x2048xf8E4M3FN>, tensor<?x1xf32>, tensor<2048x1xf32>, tensor<?x2048xf32>) -> tensor<?x2048xf32>
  return %0 : tensor<?x2048xf32>
}

// MXFP8 NN: A stored [K, M], E5M2 B, bias.
func.func @mxfp8_a_mn_major(%a: tensor<4096x?xf8E4M3FN>, %b: tensor<4096x4096xf8E5M2>, %sa: tensor<?x128xf8E8M0FNU>, %sb: tensor<4096x128xf8E8M0FNU>, %bias: tensor<4096xbf16>) -> tensor<?x4096xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb bias %bias {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, a_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<4096x?xf8E4M3FN>, tensor<4096x4096xf8E5M2>, tensor<?x128xf8E8M0FNU>, tensor<4096x128xf8E8M0FNU>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

// MXFP8 NT: B stored [K, N], f32 output, tile N 128 (two accumulators),
// promoted accumulation (the block-scaled MMA needs no promotion).
func.func @mxfp8_b_mn_major(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<2048x2048xf8E4M3FN>, %sa: tensor<?x64xf8E8M0FNU>, %sb: tensor<2048x64xf8E8M0FNU>) -> tensor<?x2048xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 5>} : (tensor<?x2048xf8E4M3FN>, tensor<2048x2048xf8E4M3FN>, tensor<?x64xf8E8M0FNU>, tensor<2048x64xf8E8M0FNU>) -> tensor<?x2048xf32>
  return %0 : tensor<?x2048xf32>
}

// Blockwise (DeepSeek-V3 shape) with f32 power-of-two scales: the pipeline
// rewrites the scales to UE8M0 1x32 blocks (scales_to_mx kernels write
// the atoms); the GEMM kernel is the MXFP8 one.
func.func @blockwise_as_mx(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<7168x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<56x56xf32>) -> tensor<?x7168xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<scales = pow2>} : (tensor<?x7168xf8E4M3FN>, tensor<7168x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<56x56xf32>) -> tensor<?x7168xbf16>
  return %0 : tensor<?x7168xbf16>
}

// MXFP8 TN (last: its entry ends the PTX, which MXPTX checks).
// MXPTX-LABEL: .entry fp8_gemm_mxfp8_e4m3_e4m3_bf16_n7168_k2048_t128x256x128_s3_fast(
// MXPTX: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// MXPTX: tcgen05.ld.sync.aligned.32x32b.x32.b32
// MXPTX: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// MXPTX: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// MXPTX: tcgen05.cp.cta_group::1.32x128b.warpx4
// MXPTX: tcgen05.cp.cta_group::1.32x128b.warpx4
// MXPTX: tcgen05.cp.cta_group::1.32x128b.warpx4
// MXPTX-COUNT-4: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32
// MXPTX: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// MXPTX: tcgen05.dealloc.cta_group::1.sync.aligned.b32
func.func @mxfp8_tn(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<7168x2048xf8E4M3FN>, %sa: tensor<?x64xf8E8M0FNU>, %sb: tensor<7168x64xf8E8M0FNU>) -> tensor<?x7168xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>} : (tensor<?x2048xf8E4M3FN>, tensor<7168x2048xf8E4M3FN>, tensor<?x64xf8E8M0FNU>, tensor<7168x64xf8E8M0FNU>) -> tensor<?x7168xbf16>
  return %0 : tensor<?x7168xbf16>
}

// The cta_group::2 CTA pair: tile 256x256, cluster 2x1.
func.func @cta_pair(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<7168x2048xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x7168xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 256x256x128, stages = 4, cluster = 2x1>} : (tensor<?x2048xf8E4M3FN>, tensor<7168x2048xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x7168xbf16>
  return %0 : tensor<?x7168xbf16>
}

// The blockwise wgrad on sm_100a (dW = dY^T X, 1x128 x 1x128, both operands
// read MN-major, accumulating into the f32 main gradient).
func.func @blockwise_wgrad_as_mx(%a: tensor<4096x512xf8E4M3FN>, %b: tensor<4096x1024xf8E4M3FN>, %sa: tensor<512x32xf32>, %sb: tensor<1024x32xf32>, %c: tensor<512x1024xf32>) -> tensor<512x1024xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, a_major = #fp8.major<mn>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<>} : (tensor<4096x512xf8E4M3FN>, tensor<4096x1024xf8E4M3FN>, tensor<512x32xf32>, tensor<1024x32xf32>, tensor<512x1024xf32>) -> tensor<512x1024xf32>
  return %0 : tensor<512x1024xf32>
}

// GELU and the output amax in the epilogue (rowwise scales, N tail).
func.func @rowwise_gelu_amax(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<2112x2048xf8E4M3FN>, %sa: tensor<?x1xf32>, %sb: tensor<2112x1xf32>) -> (tensor<?x2112xbf16>, tensor<f32>) {
  %0, %1 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>, activation = #fp8.activation<gelu>} : (tensor<?x2048xf8E4M3FN>, tensor<2112x2048xf8E4M3FN>, tensor<?x1xf32>, tensor<2112x1xf32>) -> (tensor<?x2112xbf16>, tensor<f32>)
  return %0, %1 : tensor<?x2112xbf16>, tensor<f32>
}

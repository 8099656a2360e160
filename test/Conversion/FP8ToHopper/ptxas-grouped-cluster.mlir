// m_contiguous and m_masked with a 1x2 cluster (the two CTAs multicast
// halves of their shared A tile): every recipe at DeepSeek-V3's 4096 x 7168
// expert shape assembles with no register spills (the blockwise 128x192
// tile spills 8 bytes in the 40-register producer, so its 1x2 tiles here
// are 128x128 and 128x160). A masked CTA loads its half of the group's rows
// through the 3-D [G, M, K] map and multicasts it.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: fp8-compile %s --chip=sm_90a -o %t 2> %t/warnings.log
// RUN: %python %fp8_src_root/test/lit-tools/ptxas_report.py %ptxas sm_90a %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=QUIET --allow-empty < %t/warnings.log
// RUN: FileCheck %s --check-prefix=MASKED < %t/fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t128x128x128_s5_g4_c1x2.ptx
// CHECK-DAG: fp8_grouped_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t128x128x128_s5_g4_c1x2: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t128x160x128_s4_g4_c1x2: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_gemm_tensorwise_e4m3_e4m3_bf16_n4096_k7168_t128x256x128_s3_g4_c1x2_fast: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_gemm_rowwise_e4m3_e4m3_bf16_n4096_k7168_t128x192x128_s4_g4_c1x2_fast: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t128x128x128_s5_g4_c1x2: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_tensorwise_e4m3_e4m3_bf16_n4096_k7168_t128x256x128_s3_g4_c1x2_fast: {{[0-9]+}} registers
// CHECK: 6 kernels assembled, 0 with spills, 0 with wgmma serialization warnings, 0 failed
// QUIET-NOT: {{.}}
// MASKED-LABEL: .entry fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t128x128x128_s5_g4_c1x2(
// MASKED: .reqnctapercluster 2, 1, 1
// MASKED: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster
// MASKED: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [

func.func @blockwise_128(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<4x4096x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<4x32x56xf32>, %g: tensor<?xi32>) -> tensor<?x4096xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 5, cluster = 1x2>} : (tensor<?x7168xf8E4M3FN>, tensor<4x4096x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<4x32x56xf32>, tensor<?xi32>) -> tensor<?x4096xbf16>
  return %d : tensor<?x4096xbf16>
}

func.func @blockwise_160(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<4x4096x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<4x32x56xf32>, %g: tensor<?xi32>) -> tensor<?x4096xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x160x128, stages = 4, cluster = 1x2>} : (tensor<?x7168xf8E4M3FN>, tensor<4x4096x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<4x32x56xf32>, tensor<?xi32>) -> tensor<?x4096xbf16>
  return %d : tensor<?x4096xbf16>
}

func.func @tensorwise(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<4x4096x7168xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<4xf32>, %g: tensor<?xi32>) -> tensor<?x4096xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x256x128, stages = 3, cluster = 1x2>} : (tensor<?x7168xf8E4M3FN>, tensor<4x4096x7168xf8E4M3FN>, tensor<f32>, tensor<4xf32>, tensor<?xi32>) -> tensor<?x4096xbf16>
  return %d : tensor<?x4096xbf16>
}

func.func @rowwise(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<4x4096x7168xf8E4M3FN>, %sa: tensor<?x1xf32>, %sb: tensor<4x4096x1xf32>, %g: tensor<?xi32>) -> tensor<?x4096xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x192x128, stages = 4, cluster = 1x2>} : (tensor<?x7168xf8E4M3FN>, tensor<4x4096x7168xf8E4M3FN>, tensor<?x1xf32>, tensor<4x4096x1xf32>, tensor<?xi32>) -> tensor<?x4096xbf16>
  return %d : tensor<?x4096xbf16>
}

func.func @masked_blockwise(%a: tensor<4x?x7168xf8E4M3FN>, %b: tensor<4x4096x7168xf8E4M3FN>, %sa: tensor<4x?x56xf32>, %sb: tensor<4x32x56xf32>, %m: tensor<4xi32>) -> tensor<4x?x4096xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %m {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 5, cluster = 1x2>} : (tensor<4x?x7168xf8E4M3FN>, tensor<4x4096x7168xf8E4M3FN>, tensor<4x?x56xf32>, tensor<4x32x56xf32>, tensor<4xi32>) -> tensor<4x?x4096xbf16>
  return %d : tensor<4x?x4096xbf16>
}

func.func @masked_tensorwise(%a: tensor<4x?x7168xf8E4M3FN>, %b: tensor<4x4096x7168xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<4xf32>, %m: tensor<4xi32>) -> tensor<4x?x4096xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %m {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x256x128, stages = 3, cluster = 1x2>} : (tensor<4x?x7168xf8E4M3FN>, tensor<4x4096x7168xf8E4M3FN>, tensor<f32>, tensor<4xf32>, tensor<4xi32>) -> tensor<4x?x4096xbf16>
  return %d : tensor<4x?x4096xbf16>
}

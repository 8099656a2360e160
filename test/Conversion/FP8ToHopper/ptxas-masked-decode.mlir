// The m_masked scheduler maps a tile to its group by a prefix over all G
// counts, unrolled, in the producer and in the consumers' epilogue beside
// the live accumulators: at 32 experts (decode, DeepSeek-V3 blockwise) the
// kernel and its launch variants (tile M 128 or 64 by tile N in steps of 16,
// those with more B scale classes beside a larger producer budget) still
// assemble with no register spills.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: fp8-compile %s --chip=sm_90a -o %t 2> %t/warnings.log
// RUN: %python %fp8_src_root/test/lit-tools/ptxas_report.py %ptxas sm_90a %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=QUIET --allow-empty < %t/warnings.log
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t128x192x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t128x160x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t128x144x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t128x128x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t128x112x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t64x192x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t64x160x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t64x144x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t64x128x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t64x112x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t64x96x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t64x80x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t64x64x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t64x48x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t64x32x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK-DAG: fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k7168_t64x16x128_s{{[0-9]+}}_g32: {{[0-9]+}} registers
// CHECK: 16 kernels assembled, 0 with spills, 0 with wgmma serialization warnings, 0 failed
// QUIET-NOT: {{.}}

func.func @masked_up_blockwise(%x: tensor<32x?x7168xf8E4M3FN>, %w: tensor<32x4096x7168xf8E4M3FN>,
                               %sx: tensor<32x?x56xf32>, %sw: tensor<32x32x56xf32>,
                               %counts: tensor<32xi32>) -> tensor<32x?x4096xbf16> {
  %y = fp8.grouped_scaled_matmul %x, %w, %sx, %sw, %counts
      {layout = #fp8.grouped_layout<m_masked>,
       a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 128x128>,
       accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<32x?x7168xf8E4M3FN>, tensor<32x4096x7168xf8E4M3FN>, tensor<32x?x56xf32>,
         tensor<32x32x56xf32>, tensor<32xi32>) -> tensor<32x?x4096xbf16>
  return %y : tensor<32x?x4096xbf16>
}

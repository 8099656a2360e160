// Every sm_100a grouped (m_contiguous) GEMM recipe assembles with
// `ptxas -arch=sm_100a`, with no register spills: per-tensor and row-wise
// (kind::f8f6f4, the scales of the tile's group in the epilogue), DeepSeek
// blockwise with UE8M0 scales on the block-scaled MMA, and MXFP8 (mx 1x32,
// UE8M0 atoms by TMA at the group's atom row); and so do the grouped
// examples (moe_grouped.mlir's f32 blockwise function is sm_90a's only).
// The kernels are not run (no sm_100a GPU).
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t %t/ex
// RUN: fp8-compile %s --chip=sm_100a -o %t 2> %t/warnings.log
// RUN: fp8-compile %fp8_src_root/examples/moe_grouped_mxfp8.mlir --chip=sm_100a -o %t/ex 2>> %t/warnings.log
// RUN: %python %fp8_src_root/test/lit-tools/ptxas_report.py %ptxas sm_100a %t | FileCheck %s --check-prefix=REPORT
// RUN: %python %fp8_src_root/test/lit-tools/ptxas_report.py %ptxas sm_100a %t/ex | FileCheck %s --check-prefix=EXAMPLE
// RUN: FileCheck %s --check-prefix=QUIET --allow-empty < %t/warnings.log
// RUN: FileCheck %s --check-prefix=F8F6F4 < %t/fp8_grouped_gemm_rowwise_e4m3_e4m3_bf16_n7168_k2048_t128x256x128_s3_g8_fast.ptx
// RUN: FileCheck %s --check-prefix=MX < %t/fp8_grouped_gemm_mxfp8_e4m3_e4m3_bf16_n4096_k7168_t128x256x128_s3_g8_fast.ptx
// RUN: FileCheck %s --check-prefix=META < %t/fp8_grouped_gemm_mxfp8_e4m3_e4m3_bf16_n4096_k7168_t128x256x128_s3_g8_fast.json
// REPORT-DAG: fp8_grouped_gemm_tensorwise_e4m3_e4m3_f32_n1024_k2048_{{.*}}_g4_fast: {{[0-9]+}} registers
// REPORT-DAG: fp8_grouped_gemm_rowwise_e4m3_e4m3_bf16_n7168_k2048_{{.*}}_g8_fast: {{[0-9]+}} registers
// REPORT-DAG: fp8_grouped_gemm_blockwise_e4m3_e4m3_bf16_n2048_k1024_{{.*}}_g2_mx: {{[0-9]+}} registers
// REPORT-DAG: fp8_grouped_gemm_mxfp8_e4m3_e4m3_bf16_n4096_k7168_{{.*}}_g8_fast: {{[0-9]+}} registers
// REPORT: 4 kernels assembled, 0 with spills, 0 with wgmma serialization warnings, 0 failed
// EXAMPLE-DAG: fp8_grouped_gemm_mxfp8_e4m3_e4m3_bf16_n4096_k7168_{{.*}}_g8_fast: {{[0-9]+}} registers
// EXAMPLE-DAG: fp8_grouped_gemm_blockwise_e4m3_e4m3_bf16_n7168_k2048_{{.*}}_g8_mx: {{[0-9]+}} registers
// EXAMPLE: 2 kernels assembled, 0 with spills, 0 with wgmma serialization warnings, 0 failed
// QUIET-NOT: {{.}}
// F8F6F4: tcgen05.alloc
// F8F6F4: tcgen05.mma.cta_group::1.kind::f8f6f4
// F8F6F4: tcgen05.ld
// MX: tcgen05.cp.cta_group::1.32x128b.warpx4
// MX: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale
// B's scales: the 8 groups' atoms stacked (8 * 4096/128 = 256 atom rows of
// 7168/128 = 56 K groups), B itself the stacked [8 * 4096, 7168] view.
// META: "name": "b_scale_inv",
// META-NEXT: "role": "input",
// META-NEXT: "shape": [
// META-NEXT: 8,
// META-NEXT: 32,
// META-NEXT: 56,
// META-NEXT: 512

func.func @tensorwise(%x: tensor<?x2048xf8E4M3FN>, %w: tensor<4x1024x2048xf8E4M3FN>,
                      %sx: tensor<f32>, %sw: tensor<4xf32>,
                      %experts: tensor<?xi32>) -> tensor<?x1024xf32> {
  %y = fp8.grouped_scaled_matmul %x, %w, %sx, %sw, %experts
      {layout = #fp8.grouped_layout<m_contiguous>,
       a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<?x2048xf8E4M3FN>, tensor<4x1024x2048xf8E4M3FN>, tensor<f32>,
         tensor<4xf32>, tensor<?xi32>) -> tensor<?x1024xf32>
  return %y : tensor<?x1024xf32>
}

func.func @rowwise(%h: tensor<?x2048xf8E4M3FN>, %w: tensor<8x7168x2048xf8E4M3FN>,
                   %sh: tensor<?x1xf32>, %sw: tensor<8x7168x1xf32>,
                   %experts: tensor<?xi32>) -> tensor<?x7168xbf16> {
  %y = fp8.grouped_scaled_matmul %h, %w, %sh, %sw, %experts
      {layout = #fp8.grouped_layout<m_contiguous>,
       a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<?x2048xf8E4M3FN>, tensor<8x7168x2048xf8E4M3FN>, tensor<?x1xf32>,
         tensor<8x7168x1xf32>, tensor<?xi32>) -> tensor<?x7168xbf16>
  return %y : tensor<?x7168xbf16>
}

// UE8M0 blockwise scales (powers of two by their type).
func.func @blockwise_ue8m0(%x: tensor<?x1024xf8E4M3FN>, %w: tensor<2x2048x1024xf8E4M3FN>,
                           %sx: tensor<?x8xf8E8M0FNU>, %sw: tensor<2x16x8xf8E8M0FNU>,
                           %experts: tensor<?xi32>) -> tensor<?x2048xbf16> {
  %y = fp8.grouped_scaled_matmul %x, %w, %sx, %sw, %experts
      {layout = #fp8.grouped_layout<m_contiguous>,
       a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 128x128>,
       accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<?x1024xf8E4M3FN>, tensor<2x2048x1024xf8E4M3FN>, tensor<?x8xf8E8M0FNU>,
         tensor<2x16x8xf8E8M0FNU>, tensor<?xi32>) -> tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}

func.func @mxfp8(%x: tensor<?x7168xf8E4M3FN>, %w: tensor<8x4096x7168xf8E4M3FN>,
                 %sx: tensor<?x224xf8E8M0FNU>, %sw: tensor<8x4096x224xf8E8M0FNU>,
                 %experts: tensor<?xi32>) -> tensor<?x4096xbf16> {
  %y = fp8.grouped_scaled_matmul %x, %w, %sx, %sw, %experts
      {layout = #fp8.grouped_layout<m_contiguous>,
       a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<?x7168xf8E4M3FN>, tensor<8x4096x7168xf8E4M3FN>, tensor<?x224xf8E8M0FNU>,
         tensor<8x4096x224xf8E8M0FNU>, tensor<?xi32>) -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}

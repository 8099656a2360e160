// The 1D x 1D GEMM accumulating into C, with its launch variants: the PTX
// adds the staged boxes into D with the TMA reduce-add, and every kernel
// assembles with no register spills, also those of one promotion part
// (bf16 out and accumulating).
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: fp8-compile %s --chip=sm_90a -o %t
// RUN: cat %t/fp8_gemm_blockwise_1d1d_e4m3_e4m3_f32_n4096_k8192_t128x128x128_s5_acc.ptx | FileCheck %s --check-prefix=PTX
// RUN: %python %fp8_src_root/test/lit-tools/ptxas_report.py %ptxas sm_90a %t | FileCheck %s
// PTX: .entry fp8_gemm_blockwise_1d1d_e4m3_e4m3_f32_n4096_k8192_t128x128x128_s5_acc(
// PTX: setp.{{eq|ne}}.b64 %p{{[0-9]+}}, %rd{{[0-9]+}}, %rd{{[0-9]+}};
// PTX: cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%rd{{[0-9]+}}];
// PTX: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// CHECK-DAG: fp8_gemm_blockwise_1d1d_e4m3_e4m3_f32_n4096_k8192_t128x128x128_s5_acc: {{[0-9]+}} registers, {{.*}} spills 0/0
// CHECK-DAG: fp8_gemm_blockwise_1d1d_e4m3_e4m3_f32_n4096_k8192_t128x128x128_s4_acc: {{[0-9]+}} registers, {{.*}} spills 0/0
// CHECK-DAG: fp8_gemm_blockwise_1d1d_e4m3_e4m3_bf16_n4096_k8192_t128x128x128_s5_p1: {{[0-9]+}} registers, {{.*}} spills 0/0
// CHECK-DAG: fp8_gemm_blockwise_1d1d_e4m3_e4m3_f32_n4096_k8192_t128x128x128_s5_p1_acc: {{[0-9]+}} registers, {{.*}} spills 0/0
// CHECK: 7 kernels assembled, 0 with spills, 0 with wgmma serialization warnings, 0 failed

func.func @main_grad(%a: tensor<?x8192xf8E4M3FN>, %b: tensor<4096x8192xf8E4M3FN>, %sa: tensor<?x64xf32>, %sb: tensor<4096x64xf32>, %c: tensor<?x4096xf32>) -> tensor<?x4096xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x8192xf8E4M3FN>, tensor<4096x8192xf8E4M3FN>, tensor<?x64xf32>, tensor<4096x64xf32>, tensor<?x4096xf32>) -> tensor<?x4096xf32>
  return %0 : tensor<?x4096xf32>
}

func.func @main_grad_whole_tile(%a: tensor<?x8192xf8E4M3FN>, %b: tensor<4096x8192xf8E4M3FN>, %sa: tensor<?x64xf32>, %sb: tensor<4096x64xf32>, %c: tensor<?x4096xf32>) -> tensor<?x4096xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 4>} : (tensor<?x8192xf8E4M3FN>, tensor<4096x8192xf8E4M3FN>, tensor<?x64xf32>, tensor<4096x64xf32>, tensor<?x4096xf32>) -> tensor<?x4096xf32>
  return %0 : tensor<?x4096xf32>
}

func.func @one_part(%a: tensor<?x8192xf8E4M3FN>, %b: tensor<4096x8192xf8E4M3FN>, %sa: tensor<?x64xf32>, %sb: tensor<4096x64xf32>) -> tensor<?x4096xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 5, promotion_parts = 1>} : (tensor<?x8192xf8E4M3FN>, tensor<4096x8192xf8E4M3FN>, tensor<?x64xf32>, tensor<4096x64xf32>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

func.func @one_part_main_grad(%a: tensor<?x8192xf8E4M3FN>, %b: tensor<4096x8192xf8E4M3FN>, %sa: tensor<?x64xf32>, %sb: tensor<4096x64xf32>, %c: tensor<?x4096xf32>) -> tensor<?x4096xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x128x128, stages = 5, promotion_parts = 1>} : (tensor<?x8192xf8E4M3FN>, tensor<4096x8192xf8E4M3FN>, tensor<?x64xf32>, tensor<4096x64xf32>, tensor<?x4096xf32>) -> tensor<?x4096xf32>
  return %0 : tensor<?x4096xf32>
}

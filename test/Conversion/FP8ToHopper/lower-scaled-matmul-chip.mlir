// RUN: fp8-opt %s -fp8-lower-scaled-matmul=chip=sm_100a | FileCheck %s --check-prefix=SM100
// RUN: not fp8-opt %s -fp8-lower-scaled-matmul=chip=sm_89 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// The chip selects the kernel builder: sm_100a builds the tcgen05 kernel
// (test/Conversion/FP8ToBlackwell has its checks).
// SM100: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n256_k256_t128x256x128_s3_fast(
// SM100-SAME: chip = "sm_100a"
// SM100: nvvm.tcgen05.mma
// SM100-NOT: nvvm.wgmma
// UNKNOWN: error: unknown chip 'sm_89': expected one of sm_90a, sm_100a
func.func @f(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// RUN: fp8-opt %s -fp8-attach-target=chip=sm_100a -fp8-lower-scaled-matmul | FileCheck %s --check-prefix=SM100
// RUN: not fp8-opt %s -fp8-lower-scaled-matmul 2>&1 | FileCheck %s --check-prefix=NO-TARGET

// The module's target chip selects the kernel builder: sm_100a builds the
// tcgen05 kernel (test/Conversion/FP8ToBlackwell has its checks); without a
// target the op is not lowered.
// SM100: gpu.func @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n256_k256_t128x256x128_s3_fast(
// SM100-SAME: chip = "sm_100a"
// SM100: nvvm.tcgen05.mma
// SM100-NOT: nvvm.wgmma
// NO-TARGET: :[[# @LINE + 2]]:{{[0-9]+}}: error: no fp8.target on the module: run fp8-attach-target{chip=...} (fp8-to-ptx does) first
func.func @f(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// RUN: not fp8-opt %s -fp8-lower-scaled-matmul=chip=sm_100a 2>&1 | FileCheck %s --check-prefix=SM100
// RUN: not fp8-opt %s -fp8-lower-scaled-matmul=chip=sm_89 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// SM100: error: 'fp8.scaled_matmul' op the sm_100a GEMM lowering is not implemented yet
// UNKNOWN: error: unknown chip 'sm_89': expected one of sm_90a, sm_100a
func.func @f(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

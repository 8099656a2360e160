// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-verify-target -verify-diagnostics
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-verify-target | FileCheck %s --check-prefix=SM100

// Legal everywhere: TN, per-tensor and blockwise (power-of-two scales, which
// sm_100a's block-scaled MMA takes).
// SM100-LABEL: func.func @tn_blockwise
func.func @tn_blockwise(%a: tensor<128x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %sb: tensor<1x2xf32>) -> tensor<128x128xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<>} : (tensor<128x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<1x2xf32>) -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

// -----

// SM100-LABEL: func.func @mx_on_hopper
func.func @mx_on_hopper(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<128x8xf8E8M0FNU>, %sb: tensor<64x8xf8E8M0FNU>) -> tensor<128x64xbf16> {
  // expected-error @+2 {{MXFP8 (mx 1x32, UE8M0 scales) needs block-scaled tensor-core MMA, which sm_90a does not have}}
  // expected-note @+1 {{quantize with #fp8.blockwise or #fp8.current for sm_90a, or target sm_100a}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>, tensor<64x8xf8E8M0FNU>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

// SM100-LABEL: func.func @mn_major_a_on_hopper
func.func @mn_major_a_on_hopper(%a: tensor<256x128xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  // expected-error @+2 {{sm_90a reads FP8 MMA operands K-major only (TN), but A is MN-major}}
  // expected-note @+1 {{quantize A with a columnwise output (columnwise_layout = transposed) to get a K-major copy}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, a_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<256x128xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

// SM100-LABEL: func.func @mn_major_b_on_hopper
func.func @mn_major_b_on_hopper(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x64xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  // expected-error @+2 {{sm_90a reads FP8 MMA operands K-major only (TN), but B is MN-major}}
  // expected-note @+1 {{quantize B with a columnwise output}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<256x64xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// RUN: fp8-opt %s -split-input-file -fp8-verify-target -verify-diagnostics

// A GEMM checked without a target: the chip is never guessed.
func.func @no_target(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{no fp8.target on the module: run fp8-attach-target{chip=...} (fp8-to-ptx does) first}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x256xbf16>
  return %0 : tensor<128x256xbf16>
}

// -----

// Nothing to check, nothing to complain about.
func.func @no_gemm() {
  return
}

// -----

// The target the module carries is the one checked against.
module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  func.func @mxfp8_on_hopper(%a: tensor<128x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %sa: tensor<128x8xf8E8M0FNU>, %sb: tensor<256x8xf8E8M0FNU>) -> tensor<128x256xbf16> {
    // expected-error @+2 {{MXFP8 (mx 1x32, UE8M0 scales) needs block-scaled tensor-core MMA, which sm_90a does not have}}
    // expected-note @+1 {{quantize with #fp8.blockwise or #fp8.current for sm_90a, or target sm_100a}}
    %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>, tensor<256x8xf8E8M0FNU>) -> tensor<128x256xbf16>
    return %0 : tensor<128x256xbf16>
  }
}

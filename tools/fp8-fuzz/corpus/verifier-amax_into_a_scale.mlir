func.func @amax_into_a_scale(%a: memref<128x256xf8E4M3FN>, %b: memref<64x256xf8E4M3FN>, %s: memref<f32>, %d: memref<128x64xbf16>) {
  fp8.scaled_matmul %a, %b, %s, %s outs %d amax_outs %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (memref<128x256xf8E4M3FN>, memref<64x256xf8E4M3FN>, memref<f32>, memref<f32>, memref<128x64xbf16>, memref<f32>) -> ()
  return
}

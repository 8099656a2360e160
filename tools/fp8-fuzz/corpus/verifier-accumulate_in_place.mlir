func.func @accumulate_in_place(%a: memref<128x256xf8E4M3FN>, %b: memref<64x256xf8E4M3FN>, %s: memref<f32>, %c: memref<128x64xf32>) {
  fp8.scaled_matmul %a, %b, %s, %s accumulate_into %c outs %c {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (memref<128x256xf8E4M3FN>, memref<64x256xf8E4M3FN>, memref<f32>, memref<f32>, memref<128x64xf32>, memref<128x64xf32>) -> ()
  return
}

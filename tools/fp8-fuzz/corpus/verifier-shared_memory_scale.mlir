func.func @shared_memory_scale(%a: memref<128x256xf8E4M3FN>, %b: memref<64x256xf8E4M3FN>, %s: memref<f32>, %sa: memref<f32, 3>, %d: memref<128x64xbf16>) {
  fp8.scaled_matmul %a, %b, %sa, %s outs %d {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (memref<128x256xf8E4M3FN>, memref<64x256xf8E4M3FN>, memref<f32, 3>, memref<f32>, memref<128x64xbf16>) -> ()
  return
}

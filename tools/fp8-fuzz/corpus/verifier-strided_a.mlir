func.func @strided_a(%a: memref<128x256xf8E4M3FN, strided<[512, 1]>>, %b: memref<64x256xf8E4M3FN>, %s: memref<f32>, %d: memref<128x64xbf16>) {
  fp8.scaled_matmul %a, %b, %s, %s outs %d {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (memref<128x256xf8E4M3FN, strided<[512, 1]>>, memref<64x256xf8E4M3FN>, memref<f32>, memref<f32>, memref<128x64xbf16>) -> ()
  return
}

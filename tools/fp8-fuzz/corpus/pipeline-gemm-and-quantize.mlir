func.func @gemm_and_quantize(%a: tensor<?x256xf8E4M3FN>, %b: tensor<256x256xf8E4M3FN>, %s: tensor<f32>, %x: tensor<65536x65536xbf16>)
    -> (tensor<?x256xbf16>, tensor<65536x65536xf8E4M3FN>, tensor<65536x512xf32>) {
  %d = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<?x256xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x256xbf16>
  %q, %qs = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>}
      : tensor<65536x65536xbf16> -> rowwise(tensor<65536x65536xf8E4M3FN>, tensor<65536x512xf32>)
  return %d, %q, %qs : tensor<?x256xbf16>, tensor<65536x65536xf8E4M3FN>, tensor<65536x512xf32>
}

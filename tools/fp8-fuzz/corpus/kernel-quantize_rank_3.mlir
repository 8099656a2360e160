func.func @quantize_rank_3(%x: tensor<4x128x256xbf16>, %s: tensor<f32>) {
  %q, %si = fp8.quantize %x scale %s {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<4x128x256xbf16>, tensor<f32> -> rowwise(tensor<4x128x256xf8E4M3FN>, tensor<f32>)
  return
}

func.func @quantize_dynamic_c(%x: tensor<128x?xbf16>, %s: tensor<f32>) {
  %q, %si = fp8.quantize %x scale %s {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<128x?xbf16>, tensor<f32> -> rowwise(tensor<128x?xf8E4M3FN>, tensor<f32>)
  return
}

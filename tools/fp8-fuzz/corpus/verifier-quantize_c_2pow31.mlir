func.func @quantize_c_2pow31(%x: tensor<128x2147483648xbf16>, %s: tensor<f32>) {
  %q, %si = fp8.quantize %x scale %s {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<128x2147483648xbf16>, tensor<f32> -> rowwise(tensor<128x2147483648xf8E4M3FN>, tensor<f32>)
  return
}

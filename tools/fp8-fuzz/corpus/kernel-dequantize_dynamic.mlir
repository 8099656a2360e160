func.func @dequantize_dynamic(%q: tensor<?x?xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x?xbf16> {
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tensor>} : tensor<?x?xf8E4M3FN>, tensor<f32> -> tensor<?x?xbf16>
  return %y : tensor<?x?xbf16>
}

func.func @update_history_unranked(%h: tensor<*xf32>, %amax: tensor<f32>) {
  %0 = fp8.update_amax_history %h, %amax {recipe = #fp8.delayed<history = 16>} : tensor<*xf32>, tensor<f32>
  return
}

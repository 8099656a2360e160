// Recipe: #fp8.current<format = e4m3> with #fp8.granularity<row>
// Chips: sm_90a sm_100a
//
// Row-wise current scaling (one scale per token of A, one per output channel
// of B), as torch._scaled_mm's rowwise mode: the scales are vectors applied
// in the GEMM epilogue, with a bias.
func.func @fprop_rowwise(%x: tensor<?x7168xbf16>, %w: tensor<2048x7168xbf16>,
                         %bias: tensor<2048xbf16>) -> tensor<?x2048xbf16> {
  %xq, %xs = fp8.quantize %x
      {recipe = #fp8.current<format = e4m3>, granularity = #fp8.granularity<row>}
      : tensor<?x7168xbf16> -> rowwise(tensor<?x7168xf8E4M3FN>, tensor<?x1xf32>)
  %wq, %ws = fp8.quantize %w
      {recipe = #fp8.current<format = e4m3>, granularity = #fp8.granularity<row>}
      : tensor<2048x7168xbf16> -> rowwise(tensor<2048x7168xf8E4M3FN>, tensor<2048x1xf32>)
  %y = fp8.scaled_matmul %xq, %wq, %xs, %ws bias %bias
      {a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>,
       accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.current<format = e4m3>}
      : (tensor<?x7168xf8E4M3FN>, tensor<2048x7168xf8E4M3FN>, tensor<?x1xf32>,
         tensor<2048x1xf32>, tensor<2048xbf16>) -> tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}

// Recipe: #fp8.blockwise<act = 1x128, weight = 128x128, scales = pow2, amax_clamp = 1.0e-4>
// Chips: sm_90a sm_100a
//
// DeepSeek-V3 blockwise scaling: activations in 1x128 tiles along K, weights
// in 128x128 tiles, promotion of the partial sums into f32 every 128 K
// elements. Shape of DeepSeek-V3's shared-expert down projection (N = 2112 is
// a tail of half a tile).
func.func @fprop_blockwise(%x: tensor<?x7168xbf16>, %w: tensor<2112x7168xbf16>)
    -> tensor<?x2112xbf16> {
  %xq, %xs = fp8.quantize %x
      {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>}
      : tensor<?x7168xbf16> -> rowwise(tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>)
  %wq, %ws = fp8.quantize %w
      {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>}
      : tensor<2112x7168xbf16> -> rowwise(tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32>)
  %y = fp8.scaled_matmul %xq, %wq, %xs, %ws
      {a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 128x128>,
       accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<>}
      : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>,
         tensor<17x56xf32>) -> tensor<?x2112xbf16>
  return %y : tensor<?x2112xbf16>
}

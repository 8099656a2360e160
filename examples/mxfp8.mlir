// Recipe: #fp8.mxfp8<block = 32, rounding = round_up, format = e4m3>
// Chips: sm_100a
//
// MXFP8 (OCP MX, Transformer Engine MXFP8BlockScaling) wgrad on Blackwell:
// dW = dY^T X accumulated into an f32 main gradient. Both operands enter with
// M (the token dimension) as the reduction dimension, so they are quantized
// with 32x1 blocks (the columnwise output, kept untransposed: Blackwell reads
// MN-major FP8 operands directly). sm_90a has no block-scaled MMA and rejects
// this GEMM in fp8-verify-target.
func.func @wgrad_mxfp8(%dy: tensor<8192x2048xbf16>, %x: tensor<8192x1024xbf16>,
                       %main_grad: tensor<2048x1024xf32>) -> tensor<2048x1024xf32> {
  %dyq, %dys = fp8.quantize %dy
      {recipe = #fp8.mxfp8<>, granularity = #fp8.granularity<mx 1x32>,
       columnwise_layout = #fp8.columnwise_layout<untransposed>}
      : tensor<8192x2048xbf16> -> columnwise(tensor<8192x2048xf8E4M3FN>, tensor<2048x256xf8E8M0FNU>)
  %xq, %xs = fp8.quantize %x
      {recipe = #fp8.mxfp8<>, granularity = #fp8.granularity<mx 1x32>,
       columnwise_layout = #fp8.columnwise_layout<untransposed>}
      : tensor<8192x1024xbf16> -> columnwise(tensor<8192x1024xf8E4M3FN>, tensor<1024x256xf8E8M0FNU>)
  %dw = fp8.scaled_matmul %dyq, %xq, %dys, %xs accumulate_into %main_grad
      {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>,
       a_major = #fp8.major<mn>, b_major = #fp8.major<mn>,
       accumulation = #fp8.accumulation<fast>, recipe = #fp8.mxfp8<>}
      : (tensor<8192x2048xf8E4M3FN>, tensor<8192x1024xf8E4M3FN>, tensor<2048x256xf8E8M0FNU>,
         tensor<1024x256xf8E8M0FNU>, tensor<2048x1024xf32>) -> tensor<2048x1024xf32>
  return %dw : tensor<2048x1024xf32>
}

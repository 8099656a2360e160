// Recipe: masked grouped GEMMs (DeepSeek-V3 blockwise, rowwise, per-tensor)
// Chips: sm_90a
//
// A mixture-of-experts layer's expert GEMMs at decode, in the masked layout
// of fp8.grouped_scaled_matmul (docs/grouped.md): every expert has room for
// M tokens in a [G, M, K] tensor, and %counts (on the device) says how many
// of them are valid. The launch does not depend on the counts, so one
// launch can be captured in a CUDA graph; rows of D past an expert's count
// are not written. One persistent kernel per GEMM walks (expert, tile).

// The gate/up projection, DeepSeek-V3 blockwise: 1x128 activation scales
// per expert, 128x128 weight scales per expert.
func.func @masked_up_blockwise(%x: tensor<4x?x7168xf8E4M3FN>, %w: tensor<4x4096x7168xf8E4M3FN>,
                               %sx: tensor<4x?x56xf32>, %sw: tensor<4x32x56xf32>,
                               %counts: tensor<4xi32>) -> tensor<4x?x4096xbf16> {
  %y = fp8.grouped_scaled_matmul %x, %w, %sx, %sw, %counts
      {layout = #fp8.grouped_layout<m_masked>,
       a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 128x128>,
       accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<4x?x7168xf8E4M3FN>, tensor<4x4096x7168xf8E4M3FN>, tensor<4x?x56xf32>,
         tensor<4x32x56xf32>, tensor<4xi32>) -> tensor<4x?x4096xbf16>
  return %y : tensor<4x?x4096xbf16>
}

// The down projection, rowwise: one scale per token and per output channel
// of each expert.
func.func @masked_down_rowwise(%h: tensor<4x?x2048xf8E4M3FN>, %w: tensor<4x7168x2048xf8E4M3FN>,
                               %sh: tensor<4x?x1xf32>, %sw: tensor<4x7168x1xf32>,
                               %counts: tensor<4xi32>) -> tensor<4x?x7168xbf16> {
  %y = fp8.grouped_scaled_matmul %h, %w, %sh, %sw, %counts
      {layout = #fp8.grouped_layout<m_masked>,
       a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<4x?x2048xf8E4M3FN>, tensor<4x7168x2048xf8E4M3FN>, tensor<4x?x1xf32>,
         tensor<4x7168x1xf32>, tensor<4xi32>) -> tensor<4x?x7168xbf16>
  return %y : tensor<4x?x7168xbf16>
}

// Per-tensor scales: one for the tokens, one per expert weight.
func.func @masked_tensorwise(%x: tensor<2x?x2048xf8E4M3FN>, %w: tensor<2x1024x2048xf8E4M3FN>,
                             %sx: tensor<f32>, %sw: tensor<2xf32>,
                             %counts: tensor<2xi32>) -> tensor<2x?x1024xf32> {
  %y = fp8.grouped_scaled_matmul %x, %w, %sx, %sw, %counts
      {layout = #fp8.grouped_layout<m_masked>,
       a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<2x?x2048xf8E4M3FN>, tensor<2x1024x2048xf8E4M3FN>, tensor<f32>,
         tensor<2xf32>, tensor<2xi32>) -> tensor<2x?x1024xf32>
  return %y : tensor<2x?x1024xf32>
}

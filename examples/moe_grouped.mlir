// Recipe: grouped GEMMs (DeepSeek-V3 blockwise, rowwise, per-tensor)
// Chips: sm_90a
//
// A mixture-of-experts layer's expert GEMMs as fp8.grouped_scaled_matmul
// (docs/grouped.md): the tokens of all 8 experts in one [M, K] tensor,
// sorted by expert, each expert's rows starting at a multiple of 128; the
// experts' weights [8, N, K]; %experts the expert of each row (-1 for
// padding rows). One persistent kernel per GEMM walks (expert, tile).

// The gate/up projection, DeepSeek-V3 blockwise: 1x128 activation scales,
// 128x128 weight scales per expert.
func.func @experts_up_blockwise(%x: tensor<?x7168xf8E4M3FN>, %w: tensor<8x4096x7168xf8E4M3FN>,
                                %sx: tensor<?x56xf32>, %sw: tensor<8x32x56xf32>,
                                %experts: tensor<?xi32>) -> tensor<?x4096xbf16> {
  %y = fp8.grouped_scaled_matmul %x, %w, %sx, %sw, %experts
      {layout = #fp8.grouped_layout<m_contiguous>,
       a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 128x128>,
       accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<?x7168xf8E4M3FN>, tensor<8x4096x7168xf8E4M3FN>, tensor<?x56xf32>,
         tensor<8x32x56xf32>, tensor<?xi32>) -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}

// The down projection, rowwise: one scale per token and per output channel
// of each expert (torch._scaled_grouped_mm's recipe).
func.func @experts_down_rowwise(%h: tensor<?x2048xf8E4M3FN>, %w: tensor<8x7168x2048xf8E4M3FN>,
                                %sh: tensor<?x1xf32>, %sw: tensor<8x7168x1xf32>,
                                %experts: tensor<?xi32>) -> tensor<?x7168xbf16> {
  %y = fp8.grouped_scaled_matmul %h, %w, %sh, %sw, %experts
      {layout = #fp8.grouped_layout<m_contiguous>,
       a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<?x2048xf8E4M3FN>, tensor<8x7168x2048xf8E4M3FN>, tensor<?x1xf32>,
         tensor<8x7168x1xf32>, tensor<?xi32>) -> tensor<?x7168xbf16>
  return %y : tensor<?x7168xbf16>
}

// Per-tensor scales: one for the tokens, one per expert weight.
func.func @experts_tensorwise(%x: tensor<?x2048xf8E4M3FN>, %w: tensor<4x1024x2048xf8E4M3FN>,
                              %sx: tensor<f32>, %sw: tensor<4xf32>,
                              %experts: tensor<?xi32>) -> tensor<?x1024xf32> {
  %y = fp8.grouped_scaled_matmul %x, %w, %sx, %sw, %experts
      {layout = #fp8.grouped_layout<m_contiguous>,
       a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<?x2048xf8E4M3FN>, tensor<4x1024x2048xf8E4M3FN>, tensor<f32>,
         tensor<4xf32>, tensor<?xi32>) -> tensor<?x1024xf32>
  return %y : tensor<?x1024xf32>
}

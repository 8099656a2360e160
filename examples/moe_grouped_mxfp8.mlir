// Recipe: grouped GEMMs on the sm_100a block-scaled MMA (MXFP8, UE8M0 blockwise)
// Chips: sm_100a
//
// The expert GEMMs of examples/moe_grouped.mlir with the scales Blackwell's
// block-scaled MMA takes (docs/grouped.md): the tokens of all 8 experts in
// one [M, K] tensor sorted by expert, each expert's rows starting at a
// multiple of 128; the experts' weights [8, N, K]; %experts the expert of
// each row (-1 for padding rows). One persistent tcgen05 kernel per GEMM
// walks (expert, tile). Compiled and assembled for sm_100a; not run (no
// Blackwell GPU here).

// The gate/up projection in MXFP8: one UE8M0 scale per 1x32 block of the
// tokens and of each expert's weight rows.
func.func @experts_up_mxfp8(%x: tensor<?x7168xf8E4M3FN>, %w: tensor<8x4096x7168xf8E4M3FN>,
                            %sx: tensor<?x224xf8E8M0FNU>, %sw: tensor<8x4096x224xf8E8M0FNU>,
                            %experts: tensor<?xi32>) -> tensor<?x4096xbf16> {
  %y = fp8.grouped_scaled_matmul %x, %w, %sx, %sw, %experts
      {layout = #fp8.grouped_layout<m_contiguous>,
       a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>,
       accumulation = #fp8.accumulation<fast>}
      : (tensor<?x7168xf8E4M3FN>, tensor<8x4096x7168xf8E4M3FN>, tensor<?x224xf8E8M0FNU>,
         tensor<8x4096x224xf8E8M0FNU>, tensor<?xi32>) -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}

// The down projection, DeepSeek-V3 blockwise with power-of-two (UE8M0)
// scales: 1x128 token tiles, 128x128 weight tiles per expert, passed in the
// MX atom layout the kernel metadata states.
func.func @experts_down_blockwise(%h: tensor<?x2048xf8E4M3FN>, %w: tensor<8x7168x2048xf8E4M3FN>,
                                  %sh: tensor<?x16xf8E8M0FNU>, %sw: tensor<8x56x16xf8E8M0FNU>,
                                  %experts: tensor<?xi32>) -> tensor<?x7168xbf16> {
  %y = fp8.grouped_scaled_matmul %h, %w, %sh, %sw, %experts
      {layout = #fp8.grouped_layout<m_contiguous>,
       a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 128x128>,
       accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<?x2048xf8E4M3FN>, tensor<8x7168x2048xf8E4M3FN>, tensor<?x16xf8E8M0FNU>,
         tensor<8x56x16xf8E8M0FNU>, tensor<?xi32>) -> tensor<?x7168xbf16>
  return %y : tensor<?x7168xbf16>
}

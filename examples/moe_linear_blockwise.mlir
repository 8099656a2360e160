// Recipe: DeepSeek-V3 blockwise (1x128 activations, 128x128 weights per expert)
// Chips: sm_90a
//
// The expert layers of a mixture-of-experts block as fp8.grouped_linear
// (docs/grouped-linear.md): the tokens of all 8 experts in one [M, K]
// tensor, sorted by expert, each expert's rows starting at a multiple of
// 128 (zero padding rows); the experts' weights [8, N, K] in bf16;
// %experts the expert of each row (-1 for padding rows). fp8-expand-linear
// quantizes X in 1x128 blocks and the 8 weights each in 128x128 tiles (one
// kernel for all of them), then runs one m_contiguous grouped GEMM. The
// token count is a run-time value: one compiled forward serves every M.

// The gate/up projection of DeepSeek-V3's experts (7168 -> 4096).
func.func @experts_up(%x: tensor<?x7168xbf16>, %w: tensor<8x4096x7168xbf16>,
                      %experts: tensor<?xi32>) -> tensor<?x4096xbf16> {
  %y = fp8.grouped_linear %x, %w groups %experts {recipe = #fp8.blockwise<>}
      : (tensor<?x7168xbf16>, tensor<8x4096x7168xbf16>, tensor<?xi32>) -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}

// The down projection (2048 -> 7168).
func.func @experts_down(%h: tensor<?x2048xbf16>, %w: tensor<8x7168x2048xbf16>,
                        %experts: tensor<?xi32>) -> tensor<?x7168xbf16> {
  %y = fp8.grouped_linear %h, %w groups %experts {recipe = #fp8.blockwise<>}
      : (tensor<?x2048xbf16>, tensor<8x7168x2048xbf16>, tensor<?xi32>) -> tensor<?x7168xbf16>
  return %y : tensor<?x7168xbf16>
}

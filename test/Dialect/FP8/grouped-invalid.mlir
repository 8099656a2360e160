// RUN: fp8-opt %s -split-input-file -verify-diagnostics

func.func @b_rank(%a: tensor<?x512xf8E4M3FN>, %b: tensor<256x512xf8E4M3FN>,
                  %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>) {
  // expected-error @+1 {{expected B of rank 3 ([G, N, K], one weight per group), got [256, 512]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<?x512xf8E4M3FN>, tensor<256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>,
         tensor<?xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @k_mismatch(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x384xf8E4M3FN>,
                      %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>) {
  // expected-error @+1 {{expected A [M, K] and B [G, N, K] to have the same K, got [?, 512] and [2, 256, 384]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<?x512xf8E4M3FN>, tensor<2x256x384xf8E4M3FN>, tensor<f32>, tensor<2xf32>,
         tensor<?xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @b_scale_per_group(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                             %sa: tensor<f32>, %sb: tensor<f32>, %g: tensor<?xi32>) {
  // expected-error @+1 {{expected b_scale_inv of shape [2] (granularity tensor of each of the G weights [256, 512]), got []}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<f32>,
         tensor<?xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @row_scales(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                      %sa: tensor<?x1xf32>, %sb: tensor<256x1xf32>, %g: tensor<?xi32>) {
  // expected-error @+1 {{expected b_scale_inv of shape [2, 256, 1] (granularity row of each of the G weights [256, 512]), got [256, 1]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<row>,
       b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>}
      : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x1xf32>, tensor<256x1xf32>,
         tensor<?xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @blockwise_a_scales(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                              %sa: tensor<?x5xf32>, %sb: tensor<2x2x4xf32>, %g: tensor<?xi32>) {
  // expected-error @+1 {{expected a_scale_inv of shape [?, 4] (granularity tile 1x128 of A [?, 512]), got [?, 5]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x5xf32>, tensor<2x2x4xf32>,
         tensor<?xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @blockwise_fast(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                          %sa: tensor<?x4xf32>, %sb: tensor<2x2x4xf32>, %g: tensor<?xi32>) {
  // expected-error @+1 {{blockwise scales change every 128 K elements: expected accumulation promoted(N) with N dividing 128}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<fast>}
      : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x4xf32>, tensor<2x2x4xf32>,
         tensor<?xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @mixed_scales(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                        %sa: tensor<?x4xf32>, %sb: tensor<2xf32>, %g: tensor<?xi32>) {
  // expected-error @+1 {{expected per-tensor or per-row scales on both sides, blockwise tile 1x128 (A) and tile 128x128 (B), or mx 1x32 on both; got tile 1x128 and tensor}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x4xf32>, tensor<2xf32>,
         tensor<?xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @group_index_rows(%a: tensor<256x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                            %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<128xi32>) {
  // expected-error @+1 {{expected groups of shape [256] ([M], the group of each row of A), got [128]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<256x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>,
         tensor<128xi32>) -> tensor<256x256xbf16>
  return
}

// -----

func.func @result_shape(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                        %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>) {
  // expected-error @+1 {{expected the result of shape [?, 256] ([M, N]), got [?, 128]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>,
         tensor<?xi32>) -> tensor<?x128xbf16>
  return
}

// -----

func.func @group_index_type(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                            %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi64>) {
  // expected-error @+1 {{operand #4 must be}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>,
         tensor<?xi64>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @a_rank(%a: tensor<2x128x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                  %sa: tensor<f32>, %sb: tensor<2xf32>, %g: tensor<?xi32>) {
  // expected-error @+1 {{expected A of rank 2 ([M, K], the rows of all groups), got [2, 128, 512]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<2x128x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>,
         tensor<?xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @mx_f32_scales(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                         %sa: tensor<?x16xf32>, %sb: tensor<2x256x16xf32>, %g: tensor<?xi32>) {
  // expected-error @+1 {{expected a_scale_inv of element type f8E8M0FNU (UE8M0 MX scales), got 'f32'}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<mx 1x32>,
       b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>}
      : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x16xf32>,
         tensor<2x256x16xf32>, tensor<?xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @row_ue8m0_scales(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                            %sa: tensor<?x1xf8E8M0FNU>, %sb: tensor<2x256x1xf32>, %g: tensor<?xi32>) {
  // expected-error @+1 {{expected a_scale_inv of element type f32 for granularity row, got 'f8E8M0FNU'}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<row>,
       b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>}
      : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x1xf8E8M0FNU>,
         tensor<2x256x1xf32>, tensor<?xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @mx_b_scale_shape(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                            %sa: tensor<?x16xf8E8M0FNU>, %sb: tensor<2x256x4xf8E8M0FNU>, %g: tensor<?xi32>) {
  // expected-error @+1 {{expected b_scale_inv of shape [2, 256, 16] (granularity mx 1x32 of each of the G weights [256, 512]), got [2, 256, 4]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<m_contiguous>, a_granularity = #fp8.granularity<mx 1x32>,
       b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>}
      : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<?x16xf8E8M0FNU>,
         tensor<2x256x4xf8E8M0FNU>, tensor<?xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @masked_a_rank(%a: tensor<?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                         %sa: tensor<f32>, %sb: tensor<2xf32>, %c: tensor<2xi32>) {
  // expected-error @+1 {{expected A of rank 3 ([G, M, K], the rows of each group), got [?, 512]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %c
      {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>,
         tensor<2xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @masked_groups_mismatch(%a: tensor<3x?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                                  %sa: tensor<f32>, %sb: tensor<2xf32>, %c: tensor<2xi32>) {
  // expected-error @+1 {{expected A [G, M, K] and B [G, N, K] to have the same G, got [3, ?, 512] and [2, 256, 512]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %c
      {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<3x?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>,
         tensor<2xi32>) -> tensor<3x?x256xbf16>
  return
}

// -----

func.func @masked_k_mismatch(%a: tensor<2x?x384xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                             %sa: tensor<f32>, %sb: tensor<2xf32>, %c: tensor<2xi32>) {
  // expected-error @+1 {{expected A [G, M, K] and B [G, N, K] to have the same K, got [2, ?, 384] and [2, 256, 512]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %c
      {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<2x?x384xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>,
         tensor<2xi32>) -> tensor<2x?x256xbf16>
  return
}

// -----

func.func @masked_counts(%a: tensor<2x?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                         %sa: tensor<f32>, %sb: tensor<2xf32>, %c: tensor<3xi32>) {
  // expected-error @+1 {{expected groups of shape [2] ([G], the valid rows of each group), got [3]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %c
      {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<2x?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>,
         tensor<3xi32>) -> tensor<2x?x256xbf16>
  return
}

// -----

func.func @masked_result(%a: tensor<2x?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                         %sa: tensor<f32>, %sb: tensor<2xf32>, %c: tensor<2xi32>) {
  // expected-error @+1 {{expected the result of shape [2, ?, 256] ([G, M, N]), got [?, 256]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %c
      {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<2x?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<f32>, tensor<2xf32>,
         tensor<2xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @masked_row_scales(%a: tensor<2x64x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                             %sa: tensor<64x1xf32>, %sb: tensor<2x256x1xf32>, %c: tensor<2xi32>) {
  // expected-error @+1 {{expected a_scale_inv of shape [2, 64, 1] (granularity row of A [2, 64, 512]), got [64, 1]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %c
      {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<row>,
       b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>}
      : (tensor<2x64x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<64x1xf32>,
         tensor<2x256x1xf32>, tensor<2xi32>) -> tensor<2x64x256xbf16>
  return
}

// -----

func.func @masked_block_scales(%a: tensor<2x?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>,
                               %sa: tensor<2x?x5xf32>, %sb: tensor<2x2x4xf32>, %c: tensor<2xi32>) {
  // expected-error @+1 {{expected a_scale_inv of shape [2, ?, 4] (granularity tile 1x128 of A [2, ?, 512]), got [2, ?, 5]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %c
      {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<2x?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<2x?x5xf32>,
         tensor<2x2x4xf32>, tensor<2xi32>) -> tensor<2x?x256xbf16>
  return
}

// -----

func.func @kg_a_rank(%a: tensor<2x256x?xf8E4M3FN>, %b: tensor<512x?xf8E4M3FN>,
    %sa: tensor<3xf32>, %sb: tensor<3xf32>, %g: tensor<3xi32>) {
  // expected-error @+1 {{expected A of rank 2 ([M, K], the K columns of all groups), got [2, 256, ?]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<2x256x?xf8E4M3FN>, tensor<512x?xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>,
         tensor<3xi32>) -> tensor<3x256x512xf32>
  return
}

// -----

func.func @kg_b_rank(%a: tensor<256x?xf8E4M3FN>, %b: tensor<3x512x?xf8E4M3FN>,
    %sa: tensor<3xf32>, %sb: tensor<3xf32>, %g: tensor<3xi32>) {
  // expected-error @+1 {{expected B of rank 2 ([N, K], the K columns of all groups), got [3, 512, ?]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<256x?xf8E4M3FN>, tensor<3x512x?xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>,
         tensor<3xi32>) -> tensor<3x256x512xf32>
  return
}

// -----

func.func @kg_k_mismatch(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x768xf8E4M3FN>,
    %sa: tensor<3xf32>, %sb: tensor<3xf32>, %g: tensor<3xi32>) {
  // expected-error @+1 {{expected A [M, K] and B [N, K] to have the same K, got [256, 1024] and [512, 768]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<256x1024xf8E4M3FN>, tensor<512x768xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>,
         tensor<3xi32>) -> tensor<3x256x512xf32>
  return
}

// -----

func.func @kg_k_alignment(%a: tensor<256x1000xf8E4M3FN>, %b: tensor<512x1000xf8E4M3FN>,
    %sa: tensor<3xf32>, %sb: tensor<3xf32>, %g: tensor<3xi32>) {
  // expected-error @+1 {{expected K, the columns of all groups, to be a multiple of 128 (every group's size is), got K = 1000}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<256x1000xf8E4M3FN>, tensor<512x1000xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>,
         tensor<3xi32>) -> tensor<3x256x512xf32>
  return
}

// -----

func.func @kg_result(%a: tensor<256x?xf8E4M3FN>, %b: tensor<512x?xf8E4M3FN>,
    %sa: tensor<3xf32>, %sb: tensor<3xf32>, %g: tensor<3xi32>) {
  // expected-error @+1 {{expected the result of shape [3, 256, 512] ([G, M, N], one [M, N] per group), got [256, 512]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<256x?xf8E4M3FN>, tensor<512x?xf8E4M3FN>, tensor<3xf32>, tensor<3xf32>,
         tensor<3xi32>) -> tensor<256x512xf32>
  return
}

// -----

func.func @kg_groups(%a: tensor<256x?xf8E4M3FN>, %b: tensor<512x?xf8E4M3FN>,
    %sa: tensor<4xf32>, %sb: tensor<4xf32>, %g: tensor<3xi32>) {
  // expected-error @+1 {{expected the result of shape [3, 256, 512] ([G, M, N], one [M, N] per group), got [4, 256, 512]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<256x?xf8E4M3FN>, tensor<512x?xf8E4M3FN>, tensor<4xf32>, tensor<4xf32>,
         tensor<3xi32>) -> tensor<4x256x512xf32>
  return
}

// -----

func.func @kg_tensor_scales(%a: tensor<256x?xf8E4M3FN>, %b: tensor<512x?xf8E4M3FN>,
    %sa: tensor<f32>, %sb: tensor<3xf32>, %g: tensor<3xi32>) {
  // expected-error @+1 {{expected a_scale_inv of shape [3] (granularity tensor of A [256, ?], one set per group), got []}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tensor>,
       b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}
      : (tensor<256x?xf8E4M3FN>, tensor<512x?xf8E4M3FN>, tensor<f32>, tensor<3xf32>,
         tensor<3xi32>) -> tensor<3x256x512xf32>
  return
}

// -----

func.func @kg_row_scales(%a: tensor<256x?xf8E4M3FN>, %b: tensor<512x?xf8E4M3FN>,
    %sa: tensor<3x256x1xf32>, %sb: tensor<512x1xf32>, %g: tensor<3xi32>) {
  // expected-error @+1 {{expected b_scale_inv of shape [3, 512, 1] (granularity row of B [512, ?], one set per group), got [512, 1]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<row>,
       b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>}
      : (tensor<256x?xf8E4M3FN>, tensor<512x?xf8E4M3FN>, tensor<3x256x1xf32>, tensor<512x1xf32>,
         tensor<3xi32>) -> tensor<3x256x512xbf16>
  return
}

// -----

func.func @kg_blockwise_scales(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>,
    %sa: tensor<256x8xf32>, %sb: tensor<512x7xf32>, %g: tensor<3xi32>) {
  // expected-error @+1 {{expected b_scale_inv of shape [512, 8] (granularity tile 1x128 of B [512, 1024]), got [512, 7]}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x7xf32>,
         tensor<3xi32>) -> tensor<3x256x512xbf16>
  return
}

// -----

func.func @kg_weight_tiles(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>,
    %sa: tensor<256x8xf32>, %sb: tensor<4x8xf32>, %g: tensor<3xi32>) {
  // expected-error @+1 {{expected per-tensor or per-row scales on both sides, or blockwise tile 1x128 on both (k_grouped: A and B are both 1x128-quantized along the tokens); got tile 1x128 and tile 128x128}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<4x8xf32>,
         tensor<3xi32>) -> tensor<3x256x512xbf16>
  return
}

// -----

func.func @kg_blockwise_fast(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>,
    %sa: tensor<256x8xf32>, %sb: tensor<512x8xf32>, %g: tensor<3xi32>) {
  // expected-error @+1 {{blockwise scales change every 128 K elements: expected accumulation promoted(N) with N dividing 128}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<fast>}
      : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x8xf32>,
         tensor<3xi32>) -> tensor<3x256x512xbf16>
  return
}

// -----

func.func @kg_ue8m0_scales(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>,
    %sa: tensor<256x8xf32>, %sb: tensor<512x8xf8E8M0FNU>, %g: tensor<3xi32>) {
  // expected-error @+1 {{expected b_scale_inv of element type f32 (the k_grouped kernels read f32 scales), got 'f8E8M0FNU'}}
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %g
      {layout = #fp8.grouped_layout<k_grouped>, a_granularity = #fp8.granularity<tile 1x128>,
       b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>}
      : (tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<512x8xf8E8M0FNU>,
         tensor<3xi32>) -> tensor<3x256x512xbf16>
  return
}

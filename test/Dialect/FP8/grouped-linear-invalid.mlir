// RUN: fp8-opt %s -split-input-file -verify-diagnostics

func.func @k_mismatch(%x: tensor<?x512xbf16>, %w: tensor<4x256x384xbf16>, %gi: tensor<?xi32>) {
  // expected-error @+1 {{expected the input [M, K] and the weight [G, N, K] (one weight per expert) to have the same K, got [?, 512] and [4, 256, 384]}}
  %y = fp8.grouped_linear %x, %w groups %gi {recipe = #fp8.blockwise<>}
      : (tensor<?x512xbf16>, tensor<4x256x384xbf16>, tensor<?xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @weight_rank(%x: tensor<?x512xbf16>, %w: tensor<256x512xbf16>, %gi: tensor<?xi32>) {
  // expected-error @+1 {{operand #1 must be 3D tensor of}}
  %y = fp8.grouped_linear %x, %w groups %gi {recipe = #fp8.blockwise<>}
      : (tensor<?x512xbf16>, tensor<256x512xbf16>, tensor<?xi32>) -> tensor<?x256xbf16>
  return
}

// -----

func.func @group_index_shape(%x: tensor<256x512xbf16>, %w: tensor<4x256x512xbf16>, %gi: tensor<128xi32>) {
  // expected-error @+1 {{expected group_index of shape [M] (the expert of each row of the input) = [256], got [128]}}
  %y = fp8.grouped_linear %x, %w groups %gi {recipe = #fp8.blockwise<>}
      : (tensor<256x512xbf16>, tensor<4x256x512xbf16>, tensor<128xi32>) -> tensor<256x256xbf16>
  return
}

// -----

func.func @result_shape(%x: tensor<256x512xbf16>, %w: tensor<4x256x512xbf16>, %gi: tensor<256xi32>) {
  // expected-error @+1 {{expected a result of shape [M, N] = [256, 256], got [256, 512]}}
  %y = fp8.grouped_linear %x, %w groups %gi {recipe = #fp8.blockwise<>}
      : (tensor<256x512xbf16>, tensor<4x256x512xbf16>, tensor<256xi32>) -> tensor<256x512xbf16>
  return
}

// -----

func.func @group_sizes_shape(%x: tensor<256x512xbf16>, %w: tensor<4x256x512xbf16>, %dy: tensor<256x256xbf16>,
                             %gi: tensor<256xi32>, %gs: tensor<8xi32>) {
  // expected-error @+1 {{expected group_sizes of shape [G] (the rows of each expert) = [4], got [8]}}
  %dx, %dw = fp8.grouped_linear_backward %x, %w, %dy groups(%gi, %gs) {recipe = #fp8.blockwise<>}
      : (tensor<256x512xbf16>, tensor<4x256x512xbf16>, tensor<256x256xbf16>, tensor<256xi32>, tensor<8xi32>)
      -> (tensor<256x512xbf16>, tensor<4x256x512xf32>)
  return
}

// -----

func.func @grad_weight_shape(%x: tensor<256x512xbf16>, %w: tensor<4x256x512xbf16>, %dy: tensor<256x256xbf16>,
                             %gi: tensor<256xi32>, %gs: tensor<4xi32>) {
  // expected-error @+1 {{expected grad_weight of shape [G, N, K] = [4, 256, 512], got [256, 4, 512]}}
  %dx, %dw = fp8.grouped_linear_backward %x, %w, %dy groups(%gi, %gs) {recipe = #fp8.blockwise<>}
      : (tensor<256x512xbf16>, tensor<4x256x512xbf16>, tensor<256x256xbf16>, tensor<256xi32>, tensor<4xi32>)
      -> (tensor<256x512xbf16>, tensor<256x4x512xf32>)
  return
}

// -----

func.func @grad_output_shape(%x: tensor<256x512xbf16>, %w: tensor<4x256x512xbf16>, %dy: tensor<256x512xbf16>,
                             %gi: tensor<256xi32>, %gs: tensor<4xi32>) {
  // expected-error @+1 {{expected grad_output of shape [M, N] = [256, 256], got [256, 512]}}
  %dx, %dw = fp8.grouped_linear_backward %x, %w, %dy groups(%gi, %gs) {recipe = #fp8.blockwise<>}
      : (tensor<256x512xbf16>, tensor<4x256x512xbf16>, tensor<256x512xbf16>, tensor<256xi32>, tensor<4xi32>)
      -> (tensor<256x512xbf16>, tensor<4x256x512xf32>)
  return
}

// -----

func.func @batch_not_square(%w: tensor<4x256x384xbf16>) {
  // A batch of matrices takes square tiles (each matrix's transpose has the
  // same blocks); other 3-D inputs are not matrices.
  // expected-error @+1 {{expected a 2-D input for granularity tile 1x128, got rank 3}}
  %q, %s = fp8.quantize %w {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>}
      : tensor<4x256x384xbf16> -> rowwise(tensor<4x256x384xf8E4M3FN>, tensor<4x256x3xf32>)
  return
}

// -----

func.func @batch_scales(%w: tensor<4x256x384xbf16>) {
  // expected-error @+1 {{expected rowwise_scale_inv of shape [4, 2, 3] (granularity tile 128x128 of each [256, 384] matrix), got [8, 3]}}
  %q, %s = fp8.quantize %w {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>}
      : tensor<4x256x384xbf16> -> rowwise(tensor<4x256x384xf8E4M3FN>, tensor<8x3xf32>)
  return
}

// -----

func.func @batch_transpose(%w: tensor<4x256x384xbf16>) {
  // expected-error @+1 {{expected columnwise data of shape [4, 384, 256] (the transposed input), got [384, 1024]}}
  %q, %s = fp8.quantize %w {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>}
      : tensor<4x256x384xbf16> -> columnwise(tensor<384x1024xf8E4M3FN>, tensor<4x3x2xf32>)
  return
}

// -----

func.func @batch_row(%w: tensor<4x256x384xbf16>) {
  // expected-error @+1 {{expected a 2-D input for granularity row, got rank 3}}
  %q, %s = fp8.quantize %w {recipe = #fp8.current<>, granularity = #fp8.granularity<row>}
      : tensor<4x256x384xbf16> -> rowwise(tensor<4x256x384xf8E4M3FN>, tensor<4x256x1xf32>)
  return
}

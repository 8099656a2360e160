// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-expand-linear -verify-diagnostics
// RUN: not fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-expand-linear 2>&1 | FileCheck %s --check-prefix=SM100

func.func @current(%x: tensor<1024x384xbf16>, %w: tensor<4x256x384xbf16>, %index: tensor<1024xi32>)
    -> tensor<1024x256xbf16> {
  // expected-error @+1 {{expert layers are expanded for the DeepSeek-V3 blockwise recipe (#fp8.blockwise: 1x128 activation and 128x128 weight tiles) only, got #fp8.current<>: the grouped GEMMs take per-tensor and rowwise weight scales per expert, which the layer's quantizations do not compute (use fp8.grouped_scaled_matmul with scales of your own)}}
  %y = fp8.grouped_linear %x, %w groups %index {recipe = #fp8.current<>}
      : (tensor<1024x384xbf16>, tensor<4x256x384xbf16>, tensor<1024xi32>) -> tensor<1024x256xbf16>
  return %y : tensor<1024x256xbf16>
}

// -----

func.func @n_crosses_experts(%x: tensor<1024x384xbf16>, %w: tensor<4x208x384xbf16>, %index: tensor<1024xi32>)
    -> tensor<1024x208xbf16> {
  // expected-error @+1 {{expected N (output features) to be multiples of 128, got N = 208, K = 384: the quantization kernel casts the experts' weights [G, N, K] as one [G * N, K] matrix in 128x128 tiles, which may not cross experts}}
  %y = fp8.grouped_linear %x, %w groups %index {recipe = #fp8.blockwise<>}
      : (tensor<1024x384xbf16>, tensor<4x208x384xbf16>, tensor<1024xi32>) -> tensor<1024x208xbf16>
  return %y : tensor<1024x208xbf16>
}

// -----

func.func @dynamic_experts(%x: tensor<1024x384xbf16>, %w: tensor<?x256x384xbf16>, %index: tensor<1024xi32>)
    -> tensor<1024x256xbf16> {
  // expected-error @+1 {{expected a static weight [G, N, K] (experts, output and input features), got 'tensor<?x256x384xbf16>': the grouped GEMM kernels are built per G, N and K}}
  %y = fp8.grouped_linear %x, %w groups %index {recipe = #fp8.blockwise<>}
      : (tensor<1024x384xbf16>, tensor<?x256x384xbf16>, tensor<1024xi32>) -> tensor<1024x256xbf16>
  return %y : tensor<1024x256xbf16>
}

// -----

// The expansion's grouped GEMMs (f32 blockwise scales, k_grouped) are sm_90a's.
// SM100: error: 'fp8.grouped_linear' op expert layers need the sm_90a grouped GEMM kernels (f32 blockwise scales, the k_grouped weight gradient), not sm_100a
func.func @on_sm100(%x: tensor<1024x384xbf16>, %w: tensor<4x256x384xbf16>, %index: tensor<1024xi32>)
    -> tensor<1024x256xbf16> {
  %y = fp8.grouped_linear %x, %w groups %index {recipe = #fp8.blockwise<>}
      : (tensor<1024x384xbf16>, tensor<4x256x384xbf16>, tensor<1024xi32>) -> tensor<1024x256xbf16>
  return %y : tensor<1024x256xbf16>
}

// -----

func.func @backward_m(%x: tensor<1000x384xbf16>, %w: tensor<4x256x384xbf16>, %dy: tensor<1000x256xbf16>,
                      %index: tensor<1000xi32>, %sizes: tensor<4xi32>) -> tensor<4x256x384xf32> {
  // expected-error @+1 {{expected a static token count M, a multiple of 128, got 1000: the weight gradient reduces over the tokens in whole 128-token blocks (the kernels are built per M); pad the tokens with zero rows, as every expert's rows are}}
  %dx, %dw = fp8.grouped_linear_backward %x, %w, %dy groups(%index, %sizes) {recipe = #fp8.blockwise<>}
      : (tensor<1000x384xbf16>, tensor<4x256x384xbf16>, tensor<1000x256xbf16>, tensor<1000xi32>, tensor<4xi32>)
      -> (tensor<1000x384xbf16>, tensor<4x256x384xf32>)
  return %dw : tensor<4x256x384xf32>
}

// -----

func.func @backward_k(%x: tensor<1024x400xbf16>, %w: tensor<4x256x400xbf16>, %dy: tensor<1024x256xbf16>,
                      %index: tensor<1024xi32>, %sizes: tensor<4xi32>) -> tensor<4x256x400xf32> {
  // expected-error @+1 {{expected N (output features) and K (input features) to be multiples of 128, got N = 256, K = 400}}
  %dx, %dw = fp8.grouped_linear_backward %x, %w, %dy groups(%index, %sizes) {recipe = #fp8.blockwise<>}
      : (tensor<1024x400xbf16>, tensor<4x256x400xbf16>, tensor<1024x256xbf16>, tensor<1024xi32>, tensor<4xi32>)
      -> (tensor<1024x400xbf16>, tensor<4x256x400xf32>)
  return %dw : tensor<4x256x400xf32>
}

// -----

func.func @split_grad_not_argument(%x: tensor<1024x384xbf16>, %w: tensor<4x256x384xbf16>, %index: tensor<1024xi32>,
                                   %sizes: tensor<4xi32>) -> tensor<4x256x384xf32> attributes {fp8.split_backward} {
  %y = fp8.grouped_linear %x, %w groups %index {recipe = #fp8.blockwise<>}
      : (tensor<1024x384xbf16>, tensor<4x256x384xbf16>, tensor<1024xi32>) -> tensor<1024x256xbf16>
  // expected-error @+1 {{reads an output gradient that is not an argument of its function}}
  %dx, %dw = fp8.grouped_linear_backward %x, %w, %y groups(%index, %sizes) {recipe = #fp8.blockwise<>}
      : (tensor<1024x384xbf16>, tensor<4x256x384xbf16>, tensor<1024x256xbf16>, tensor<1024xi32>, tensor<4xi32>)
      -> (tensor<1024x384xbf16>, tensor<4x256x384xf32>)
  return %dw : tensor<4x256x384xf32>
}

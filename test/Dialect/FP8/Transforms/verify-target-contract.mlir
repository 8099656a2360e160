// The kernel rows of the input contract (docs/contract.md): what the GEMM,
// quantization and linear-layer kernels take, checked by fp8-verify-target
// with the lowerings' own checks, before anything is lowered. The same on
// both chips.
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-verify-target -verify-diagnostics
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-verify-target -verify-diagnostics

//===----------------------------------------------------------------------===//
// GEMMs
//===----------------------------------------------------------------------===//

func.func @gemm_k_100(%a: tensor<128x100xf8E4M3FN>, %b: tensor<128x100xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x128xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op expected N and K to be multiples of 16 (TMA needs 16-byte aligned row strides), got N = 128, K = 100: pad A and B with zeros along K, and B (and D) along N, to the next multiple of 16}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x100xf8E4M3FN>, tensor<128x100xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

// -----

func.func @gemm_n_200(%a: tensor<?x128xf8E4M3FN>, %b: tensor<200x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x200xbf16> {
  // expected-error @+1 {{expected N and K to be multiples of 16 (TMA needs 16-byte aligned row strides), got N = 200, K = 128}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x128xf8E4M3FN>, tensor<200x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x200xbf16>
  return %0 : tensor<?x200xbf16>
}

// -----

func.func @gemm_dynamic_k(%a: tensor<128x?xf8E4M3FN>, %b: tensor<128x?xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x128xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op expected static N and K (one kernel is built per N and K; M may be dynamic)}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x?xf8E4M3FN>, tensor<128x?xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

// -----

func.func @gemm_promote_64(%a: tensor<128x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x128xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op the GEMM kernels promote every 128 K elements: expected accumulation fast or promoted(128), got promoted(64)}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(64)>} : (tensor<128x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

// -----

func.func @gemm_a_tile_1x256(%a: tensor<128x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>, %sa: tensor<128x1xf32>, %sb: tensor<1x1xf32>) -> tensor<128x128xbf16> {
  // expected-error @+1 {{the GEMM kernels take blockwise A scales in 1x128 tiles, got tile 1x256}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x256>, b_granularity = #fp8.granularity<tile 256x256>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<act = 1x256, weight = 256x256>} : (tensor<128x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<128x1xf32>, tensor<1x1xf32>) -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

// -----

func.func @gemm_amax_and_c(%a: tensor<128x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>, %s: tensor<f32>, %c: tensor<128x128xf32>) -> tensor<128x128xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op the GEMM kernels compute the output amax without accumulate_into (C is added at the store)}}
  %0, %amax = fp8.scaled_matmul %a, %b, %s, %s accumulate_into %c {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<128x128xf32>) -> (tensor<128x128xf32>, tensor<f32>)
  return %0 : tensor<128x128xf32>
}

// -----

// M = N = 2^31 - 16: within the extents, but more output tiles than the
// scheduler's 32-bit tile numbers hold.
func.func @gemm_tiles_beyond_32_bits(%a: tensor<2147483632x128xf8E4M3FN>, %b: tensor<2147483632x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<2147483632x2147483632xbf16> {
  // expected-error-re @+1 {{'fp8.scaled_matmul' op M = 2147483632 and N = 2147483632 make more than 2^31 - 1 = 2147483647 output tiles of {{[0-9]+}}x{{[0-9]+}} (the tile scheduler numbers them in 32 bits): split the GEMM along M}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<2147483632x128xf8E4M3FN>, tensor<2147483632x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<2147483632x2147483632xbf16>
  return %0 : tensor<2147483632x2147483632xbf16>
}

// -----

// A run-time M: the scheduler's range is checked at launch; N alone, with
// the largest raster group, overflows it here.
func.func @gemm_raster_group_times_tiles(%a: tensor<?x128xf8E4M3FN>, %b: tensor<16777216x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x16777216xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op raster_group 65535 times the 131072 tile columns of N = 16777216 exceeds 2^31 - 1 = 2147483647 (the tile scheduler counts in 32 bits): use a smaller raster_group}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x128x128, stages = 4, raster_group = 65535>} : (tensor<?x128xf8E4M3FN>, tensor<16777216x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x16777216xbf16>
  return %0 : tensor<?x16777216xbf16>
}

//===----------------------------------------------------------------------===//
// Quantization, dequantization, amax
//===----------------------------------------------------------------------===//

// -----

func.func @quantize_c_200(%x: tensor<128x200xbf16>) -> (tensor<128x200xf8E4M3FN>, tensor<128x2xf32>) {
  // expected-error @+1 {{'fp8.quantize' op the quantization kernels take C (the last dimension) a multiple of 16 (16-byte vector loads and TMA-aligned FP8 rows), got 200: pad C with zeros to a multiple of 16}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x200xbf16> -> rowwise(tensor<128x200xf8E4M3FN>, tensor<128x2xf32>)
  return %q, %s : tensor<128x200xf8E4M3FN>, tensor<128x2xf32>
}

// -----

func.func @quantize_transposed_r_120(%x: tensor<120x256xbf16>) -> (tensor<256x120xf8E4M3FN>, tensor<256x1xf32>) {
  // expected-error @+1 {{'fp8.quantize' op a columnwise (transposed) output needs R a multiple of 16 (its rows are R bytes), got 120: pad R with zeros to a multiple of 16 (or, on sm_100a, use columnwise_layout = untransposed)}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<120x256xbf16> -> columnwise(tensor<256x120xf8E4M3FN>, tensor<256x1xf32>)
  return %q, %s : tensor<256x120xf8E4M3FN>, tensor<256x1xf32>
}

// -----

func.func @quantize_dynamic_c(%x: tensor<128x?xbf16>, %s: tensor<f32>) {
  // expected-error @+1 {{'fp8.quantize' op the quantization kernels are built per static shape (a static C, the last dimension; only R may be known at run time), got 'tensor<128x?xbf16>'}}
  %q, %si = fp8.quantize %x scale %s {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<128x?xbf16>, tensor<f32> -> rowwise(tensor<128x?xf8E4M3FN>, tensor<f32>)
  return
}

// -----

func.func @quantize_too_many_elements(%x: tensor<65536x65536xbf16>) {
  // expected-error @+1 {{'fp8.quantize' op the quantization kernels take at most 2^31 - 1 = 2147483647 elements (32-bit offsets), got 'tensor<65536x65536xbf16>': split the tensor along R}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<65536x65536xbf16> -> rowwise(tensor<65536x65536xf8E4M3FN>, tensor<65536x512xf32>)
  return
}

// -----

func.func @quantize_rank_3(%x: tensor<4x128x256xbf16>, %s: tensor<f32>) {
  // expected-error @+1 {{'fp8.quantize' op the quantization kernels take 2-D inputs, got rank 3: reshape the tensor to a matrix [R, C] (tensor.collapse_shape) first}}
  %q, %si = fp8.quantize %x scale %s {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<4x128x256xbf16>, tensor<f32> -> rowwise(tensor<4x128x256xf8E4M3FN>, tensor<f32>)
  return
}

// -----

func.func @quantize_tile_1x64(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{'fp8.quantize' op the quantization kernels take 1x128 and 128x128 tiles and MX 1x32 blocks, got tile 1x64}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<act = 1x64, weight = 64x64, accumulate = promoted(64)>, granularity = #fp8.granularity<tile 1x64>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x4xf32>)
  return
}

// -----

func.func @amax_c_200(%x: tensor<128x200xbf16>) -> tensor<f32> {
  // expected-error @+1 {{'fp8.amax' op the quantization kernels take C (the last dimension) a multiple of 16}}
  %0 = fp8.amax %x : tensor<128x200xbf16> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @dequantize_dynamic(%q: tensor<?x?xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x?xbf16> {
  // expected-error @+1 {{'fp8.dequantize' op the dequantization kernels are built per static shape (a static C, the last dimension; only R may be known at run time), got 'tensor<?x?xf8E4M3FN>'}}
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tensor>} : tensor<?x?xf8E4M3FN>, tensor<f32> -> tensor<?x?xbf16>
  return %y : tensor<?x?xbf16>
}

// -----

func.func @dequantize_c_100(%q: tensor<128x100xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x100xbf16> {
  // expected-error @+1 {{'fp8.dequantize' op the dequantization kernels take C (the last dimension) a multiple of 8 (8-byte loads of the FP8 rows), got 100: pad C to a multiple of 8}}
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tensor>} : tensor<128x100xf8E4M3FN>, tensor<f32> -> tensor<128x100xbf16>
  return %y : tensor<128x100xbf16>
}

//===----------------------------------------------------------------------===//
// Linear layers, in the layer's terms (M tokens, N out, K in features)
//===----------------------------------------------------------------------===//

// -----

func.func @linear_k_100(%x: tensor<?x100xbf16>, %w: tensor<2048x100xbf16>) -> tensor<?x2048xbf16> {
  // expected-error @+1 {{'fp8.linear' op expected K (input features) to be a multiple of 16, got 100: the kernels read and write rows of it in 16-byte aligned strides (TMA)}}
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<?x100xbf16>, tensor<2048x100xbf16>) -> tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}

// -----

func.func @linear_n_100(%x: tensor<?x1024xbf16>, %w: tensor<100x1024xbf16>) -> tensor<?x100xbf16> {
  // expected-error @+1 {{'fp8.linear' op expected N (output features) to be a multiple of 16, got 100}}
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<>} : (tensor<?x1024xbf16>, tensor<100x1024xbf16>) -> tensor<?x100xbf16>
  return %y : tensor<?x100xbf16>
}

// -----

func.func @linear_dynamic_weight(%x: tensor<?x?xbf16>, %w: tensor<?x?xbf16>) -> tensor<?x?xbf16> {
  // expected-error @+1 {{'fp8.linear' op expected a static N (output features) and K (input features), got N = ?, K = ?: the GEMM kernels are built per N and K; only M (tokens) may be dynamic}}
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<?x?xbf16>, tensor<?x?xbf16>) -> tensor<?x?xbf16>
  return %y : tensor<?x?xbf16>
}

// -----

// The token count, not the wgrad GEMM's "K = 100".
func.func @linear_backward_tokens_100(%x: tensor<100x1024xbf16>, %w: tensor<2048x1024xbf16>, %dy: tensor<100x2048xbf16>) -> (tensor<100x1024xbf16>, tensor<2048x1024xf32>) {
  // expected-error @+1 {{'fp8.linear_backward' op expected the token count M to be a multiple of 16, got 100: the weight gradient dW = dY^T X reduces over M, read in rows of M bytes at 16-byte aligned strides (TMA); pad the batch to a multiple of 16 tokens}}
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>} : (tensor<100x1024xbf16>, tensor<2048x1024xbf16>, tensor<100x2048xbf16>) -> (tensor<100x1024xbf16>, tensor<2048x1024xf32>)
  return %dx, %dw : tensor<100x1024xbf16>, tensor<2048x1024xf32>
}

// -----

func.func @linear_backward_dynamic_tokens(%x: tensor<?x1024xbf16>, %w: tensor<2048x1024xbf16>, %dy: tensor<?x2048xbf16>) -> (tensor<?x1024xbf16>, tensor<2048x1024xf32>) {
  // expected-error @+1 {{'fp8.linear_backward' op expected a static token count M: the weight gradient dW = dY^T X reduces over M, and its kernel is built per reduction length (only the forward fp8.linear takes a run-time M)}}
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.blockwise<>} : (tensor<?x1024xbf16>, tensor<2048x1024xbf16>, tensor<?x2048xbf16>) -> (tensor<?x1024xbf16>, tensor<2048x1024xf32>)
  return %dx, %dw : tensor<?x1024xbf16>, tensor<2048x1024xf32>
}

// -----

func.func @linear_promote_64(%x: tensor<?x1024xbf16>, %w: tensor<2048x1024xbf16>) -> tensor<?x2048xbf16> {
  // expected-error @+1 {{'fp8.linear' op the GEMM kernels promote every 128 K elements: expected the recipe's accumulate to be fast or promoted(128), got promoted(64)}}
  %y = fp8.linear %x, %w {recipe = #fp8.current<accumulate = promoted(64)>} : (tensor<?x1024xbf16>, tensor<2048x1024xbf16>) -> tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}

// -----

func.func @linear_blockwise_1x64(%x: tensor<?x1024xbf16>, %w: tensor<2048x1024xbf16>) -> tensor<?x2048xbf16> {
  // expected-error @+1 {{'fp8.linear' op the GEMM kernels take #fp8.blockwise<act = 1x128, weight = 128x128> (or weight = 1x128), got act = 1x64, weight = 64x64}}
  %y = fp8.linear %x, %w {recipe = #fp8.blockwise<act = 1x64, weight = 64x64, accumulate = promoted(64)>} : (tensor<?x1024xbf16>, tensor<2048x1024xbf16>) -> tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}

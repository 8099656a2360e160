// The chip-independent rows of the input contract (docs/contract.md), checked
// by the op and attribute verifiers before anything else runs: ranked
// shapes, extents in [1, 2^31 - 1] named by the op's dimension names,
// overflow-free scale shapes, buffers the kernels can read, segment sizes,
// and bounded parameters.
// RUN: fp8-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Unranked tensors: named by operand, in the custom and the generic form.
//===----------------------------------------------------------------------===//

func.func @amax_unranked(%x: tensor<*xbf16>) -> tensor<f32> {
  // expected-error @+1 {{'fp8.amax' op input must be a ranked tensor, got 'tensor<*xbf16>': fp8 ops take ranked shapes (write the extents, with ? for one known only at run time)}}
  %0 = fp8.amax %x : tensor<*xbf16> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @quantize_unranked_input(%x: tensor<*xbf16>) -> (tensor<128x256xf8E4M3FN>, tensor<128x2xf32>) {
  // expected-error @+1 {{'fp8.quantize' op input must be a ranked tensor, got 'tensor<*xbf16>'}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<*xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf32>)
  return %q, %s : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>
}

// -----

func.func @quantize_unranked_result(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{'fp8.quantize' op rowwise_scale_inv must be a ranked tensor, got 'tensor<*xf32>'}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<*xf32>)
  return
}

// -----

func.func @dequantize_unranked_scale(%q: tensor<128x256xf8E4M3FN>, %s: tensor<*xf32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{'fp8.dequantize' op scale_inv must be a ranked tensor, got 'tensor<*xf32>'}}
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xf8E4M3FN>, tensor<*xf32> -> tensor<128x256xbf16>
  return %y : tensor<128x256xbf16>
}

// -----

func.func @compute_scale_unranked(%amax: tensor<*xf32>) -> tensor<f32> {
  // expected-error @+1 {{'fp8.compute_scale' op amax must be a ranked tensor, got 'tensor<*xf32>'}}
  %s, %si = fp8.compute_scale %amax {recipe = #fp8.current<>, element_type = f8E4M3FN} : tensor<*xf32> -> tensor<f32>, tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @update_history_unranked(%h: tensor<*xf32>, %amax: tensor<f32>) {
  // expected-error @+1 {{'fp8.update_amax_history' op history must be a ranked tensor, got 'tensor<*xf32>'}}
  %0 = fp8.update_amax_history %h, %amax {recipe = #fp8.delayed<history = 16>} : tensor<*xf32>, tensor<f32>
  return
}

// -----

func.func @scaled_matmul_unranked_b(%a: tensor<128x256xf8E4M3FN>, %b: tensor<*xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op B must be a ranked tensor, got 'tensor<*xf8E4M3FN>'}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<*xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @linear_unranked_weight(%x: tensor<64x256xbf16>, %w: tensor<*xbf16>) -> tensor<64x128xbf16> {
  // expected-error @+1 {{'fp8.linear' op weight must be a ranked tensor, got 'tensor<*xbf16>'}}
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<64x256xbf16>, tensor<*xbf16>) -> tensor<64x128xbf16>
  return %y : tensor<64x128xbf16>
}

// -----

func.func @linear_backward_unranked_dy(%x: tensor<64x256xbf16>, %w: tensor<128x256xbf16>, %dy: tensor<*xbf16>) {
  // expected-error @+1 {{'fp8.linear_backward' op grad_output must be a ranked tensor, got 'tensor<*xbf16>'}}
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>} : (tensor<64x256xbf16>, tensor<128x256xbf16>, tensor<*xbf16>) -> (tensor<64x256xbf16>, tensor<128x256xf32>)
  return
}

// -----

// Encoded tensors (sparse, distributed, ...) are not dense rows.
func.func @encoded_input(%x: tensor<128x256xbf16, "blocked">) -> tensor<f32> {
  // expected-error @+1 {{'fp8.amax' op input is 'tensor<128x256xbf16, "blocked">', with the encoding "blocked": fp8 ops take dense tensors (no encoding)}}
  %0 = fp8.amax %x : tensor<128x256xbf16, "blocked"> -> tensor<f32>
  return %0 : tensor<f32>
}

//===----------------------------------------------------------------------===//
// Extents: at least 1, at most 2^31 - 1, by the op's dimension names.
//===----------------------------------------------------------------------===//

// -----

func.func @gemm_all_zero(%a: tensor<0x0xf8E4M3FN>, %b: tensor<0x0xf8E4M3FN>, %s: tensor<f32>) -> tensor<0x0xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op M (dimension 0 of A, tensor<0x0xf8E4M3FN>) is 0: every extent must be at least 1 (fp8 ops take no empty tensors)}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<0x0xf8E4M3FN>, tensor<0x0xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<0x0xbf16>
  return %0 : tensor<0x0xbf16>
}

// -----

func.func @gemm_n_zero(%a: tensor<?x128xf8E4M3FN>, %b: tensor<0x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x0xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op N (dimension 0 of B, tensor<0x128xf8E4M3FN>) is 0}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x128xf8E4M3FN>, tensor<0x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x0xbf16>
  return %0 : tensor<?x0xbf16>
}

// -----

// An MN-major A is [K, M]: its dimension 1 is M.
func.func @gemm_mn_major_m_zero(%a: tensor<128x0xf8E4M3FN>, %b: tensor<64x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<0x64xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op M (dimension 1 of A, tensor<128x0xf8E4M3FN>) is 0}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, a_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<128x0xf8E4M3FN>, tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<0x64xbf16>
  return %0 : tensor<0x64xbf16>
}

// -----

func.func @gemm_k_2pow31(%a: tensor<128x2147483648xf8E4M3FN>, %b: tensor<128x2147483648xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x128xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op K (dimension 1 of A, tensor<128x2147483648xf8E4M3FN>) is 2147483648, above the largest extent the kernels take, 2^31 - 1 = 2147483647 (extents and row indices are 32-bit integers, TMA global dimensions stop at 2^32)}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x2147483648xf8E4M3FN>, tensor<128x2147483648xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

// -----

func.func @gemm_n_2pow40(%a: tensor<?x128xf8E4M3FN>, %b: tensor<1099511627776x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x1099511627776xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op N (dimension 0 of B, tensor<1099511627776x128xf8E4M3FN>) is 1099511627776, above the largest extent the kernels take}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x128xf8E4M3FN>, tensor<1099511627776x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x1099511627776xbf16>
  return %0 : tensor<?x1099511627776xbf16>
}

// -----

// The largest extent is accepted.
func.func @gemm_m_max(%a: tensor<2147483647x128xf8E4M3FN>, %b: tensor<128x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<2147483647x128xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<2147483647x128xf8E4M3FN>, tensor<128x128xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<2147483647x128xbf16>
  return %0 : tensor<2147483647x128xbf16>
}

// -----

func.func @quantize_r_zero(%x: tensor<0x256xbf16>) -> (tensor<0x256xf8E4M3FN>, tensor<0x2xf32>) {
  // expected-error @+1 {{'fp8.quantize' op R (dimension 0 of input, tensor<0x256xbf16>) is 0}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<0x256xbf16> -> rowwise(tensor<0x256xf8E4M3FN>, tensor<0x2xf32>)
  return %q, %s : tensor<0x256xf8E4M3FN>, tensor<0x2xf32>
}

// -----

func.func @quantize_c_2pow31(%x: tensor<128x2147483648xbf16>, %s: tensor<f32>) {
  // expected-error @+1 {{'fp8.quantize' op C (dimension 1 of input, tensor<128x2147483648xbf16>) is 2147483648, above the largest extent the kernels take}}
  %q, %si = fp8.quantize %x scale %s {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<128x2147483648xbf16>, tensor<f32> -> rowwise(tensor<128x2147483648xf8E4M3FN>, tensor<f32>)
  return
}

// -----

// A static scale extent of 0 with a run-time data extent.
func.func @quantize_empty_scale(%x: tensor<?x256xbf16>) {
  // expected-error @+1 {{'fp8.quantize' op dimension 0 of rowwise_scale_inv (tensor<0x2xf32>) is 0}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<?x256xbf16> -> rowwise(tensor<?x256xf8E4M3FN>, tensor<0x2xf32>)
  return
}

// -----

func.func @dequantize_c_zero(%q: tensor<128x0xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x0xbf16> {
  // expected-error @+1 {{'fp8.dequantize' op C (dimension 1 of input, tensor<128x0xf8E4M3FN>) is 0}}
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tensor>} : tensor<128x0xf8E4M3FN>, tensor<f32> -> tensor<128x0xbf16>
  return %y : tensor<128x0xbf16>
}

// -----

func.func @amax_count_overflow(%x: tensor<2147483647x2147483647x2147483647xbf16>) -> tensor<f32> {
  // expected-error @+1 {{'fp8.amax' op input 'tensor<2147483647x2147483647x2147483647xbf16>' has more elements than a 64-bit count holds}}
  %0 = fp8.amax %x : tensor<2147483647x2147483647x2147483647xbf16> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @update_history_empty(%h: tensor<0xf32>, %amax: tensor<f32>) {
  // expected-error @+1 {{'fp8.update_amax_history' op history length (dimension 0 of history, tensor<0xf32>) is 0}}
  %0 = fp8.update_amax_history %h, %amax {recipe = #fp8.delayed<history = 16>} : tensor<0xf32>, tensor<f32>
  return
}

// -----

func.func @linear_no_tokens(%x: tensor<0x256xbf16>, %w: tensor<128x256xbf16>) -> tensor<0x128xbf16> {
  // expected-error @+1 {{'fp8.linear' op M (tokens) (dimension 0 of input, tensor<0x256xbf16>) is 0}}
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<0x256xbf16>, tensor<128x256xbf16>) -> tensor<0x128xbf16>
  return %y : tensor<0x128xbf16>
}

// -----

func.func @linear_backward_n_2pow31(%x: tensor<64x256xbf16>, %w: tensor<2147483648x256xbf16>, %dy: tensor<64x2147483648xbf16>) {
  // expected-error @+1 {{'fp8.linear_backward' op N (dimension 0 of weight, tensor<2147483648x256xbf16>) is 2147483648, above the largest extent the kernels take}}
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>} : (tensor<64x256xbf16>, tensor<2147483648x256xbf16>, tensor<64x2147483648xbf16>) -> (tensor<64x256xbf16>, tensor<2147483648x256xf32>)
  return
}

//===----------------------------------------------------------------------===//
// The generic form: a K mismatch is reported before the segment sizes, and
// segment sizes that do not add up get a message of their own.
//===----------------------------------------------------------------------===//

// -----

func.func @generic_k_mismatch(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x512xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op expected A and B to have the same K: A is K-major [M, K] [128, 256] with K = 256, B is K-major [N, K] [64, 512] with K = 512}}
  %0 = "fp8.scaled_matmul"(%a, %b, %s, %s) <{a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>}> : (tensor<128x256xf8E4M3FN>, tensor<64x512xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @generic_linear_k_mismatch(%x: tensor<64x256xbf16>, %w: tensor<128x512xbf16>) {
  // expected-error @+1 {{'fp8.linear' op expected the input [M, K] and the weight [N, K] to have the same K, got [64, 256] and [128, 512]}}
  %y = "fp8.linear"(%x, %w) {recipe = #fp8.current<>} : (tensor<64x256xbf16>, tensor<128x512xbf16>) -> tensor<64x128xbf16>
  return
}

// -----

func.func @generic_no_segments(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  // expected-error @+2 {{'fp8.scaled_matmul' op has 4 operands and 1 results, which its operandSegmentSizes/resultSegmentSizes do not describe}}
  // expected-note @+1 {{write the op in its custom form, where the keywords give the sizes}}
  %0 = "fp8.scaled_matmul"(%a, %b, %s, %s) {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @generic_quantize_no_segments(%x: tensor<128x256xbf16>) -> tensor<128x256xf8E4M3FN> {
  // expected-error @+2 {{'fp8.quantize' op has 1 operands and 1 results, which its operandSegmentSizes/resultSegmentSizes do not describe}}
  // expected-note @+1 {{custom form}}
  %q = "fp8.quantize"(%x) {recipe = #fp8.current<>, granularity = #fp8.granularity<row>} : (tensor<128x256xbf16>) -> tensor<128x256xf8E4M3FN>
  return %q : tensor<128x256xf8E4M3FN>
}

// -----

// Positional names where the segments are wrong: the unranked operand is
// still named.
func.func @generic_unranked(%a: tensor<*xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'fp8.scaled_matmul' op operand #0 must be a ranked tensor, got 'tensor<*xf8E4M3FN>'}}
  %0 = "fp8.scaled_matmul"(%a, %a, %s, %s) {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<*xf8E4M3FN>, tensor<*xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return
}

//===----------------------------------------------------------------------===//
// The two levels of the dialect mixed up, by operand name.
//===----------------------------------------------------------------------===//

// -----

func.func @gemm_on_bf16(%a: tensor<128x256xbf16>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op A has element type 'bf16': fp8.scaled_matmul reads FP8 data (f8E4M3FN or f8E5M2); quantize it with fp8.quantize first, or use fp8.linear, which quantizes its operands itself}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xbf16>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @linear_on_fp8(%x: tensor<64x256xbf16>, %w: tensor<128x256xf8E4M3FN>) -> tensor<64x128xbf16> {
  // expected-error @+1 {{'fp8.linear' op weight has element type 'f8E4M3FN': fp8.linear takes the high-precision tensors (bf16, f16 or f32) and quantizes them itself; for FP8 data use fp8.scaled_matmul}}
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<64x256xbf16>, tensor<128x256xf8E4M3FN>) -> tensor<64x128xbf16>
  return %y : tensor<64x128xbf16>
}

//===----------------------------------------------------------------------===//
// Buffers (the destination-passing form): the identity layout in global
// memory, outputs of their own.
//===----------------------------------------------------------------------===//

// -----

func.func @strided_a(%a: memref<128x256xf8E4M3FN, strided<[512, 1]>>, %b: memref<64x256xf8E4M3FN>, %s: memref<f32>, %d: memref<128x64xbf16>) {
  // expected-error @+1 {{'fp8.scaled_matmul' op A is 'memref<128x256xf8E4M3FN, strided<[512, 1]>>': the kernels read dense row-major buffers (the identity layout) and take no strides; copy it into a contiguous buffer (memref.alloc + memref.copy) first}}
  fp8.scaled_matmul %a, %b, %s, %s outs %d {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (memref<128x256xf8E4M3FN, strided<[512, 1]>>, memref<64x256xf8E4M3FN>, memref<f32>, memref<f32>, memref<128x64xbf16>) -> ()
  return
}

// -----

// A fully dynamic layout may be strided at run time: rejected too.
func.func @dynamic_layout_out(%a: memref<128x256xf8E4M3FN>, %b: memref<64x256xf8E4M3FN>, %s: memref<f32>, %d: memref<128x64xbf16, strided<[?, ?], offset: ?>>) {
  // expected-error @+1 {{'fp8.scaled_matmul' op outs (D) is 'memref<128x64xbf16, strided<[?, ?], offset: ?>>': the kernels read dense row-major buffers}}
  fp8.scaled_matmul %a, %b, %s, %s outs %d {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (memref<128x256xf8E4M3FN>, memref<64x256xf8E4M3FN>, memref<f32>, memref<f32>, memref<128x64xbf16, strided<[?, ?], offset: ?>>) -> ()
  return
}

// -----

func.func @transposed_map_b(%a: memref<128x256xf8E4M3FN>, %b: memref<64x256xf8E4M3FN, affine_map<(d0, d1) -> (d1, d0)>>, %s: memref<f32>, %d: memref<128x64xbf16>) {
  // expected-error @+1 {{'fp8.scaled_matmul' op B is 'memref<64x256xf8E4M3FN, affine_map<(d0, d1) -> (d1, d0)>>': the kernels read dense row-major buffers}}
  fp8.scaled_matmul %a, %b, %s, %s outs %d {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (memref<128x256xf8E4M3FN>, memref<64x256xf8E4M3FN, affine_map<(d0, d1) -> (d1, d0)>>, memref<f32>, memref<f32>, memref<128x64xbf16>) -> ()
  return
}

// -----

func.func @shared_memory_scale(%a: memref<128x256xf8E4M3FN>, %b: memref<64x256xf8E4M3FN>, %s: memref<f32>, %sa: memref<f32, 3>, %d: memref<128x64xbf16>) {
  // expected-error @+1 {{'fp8.scaled_matmul' op a_scale_inv is 'memref<f32, 3>', in a memory space: the kernels read and write global memory, a memref with no memory space}}
  fp8.scaled_matmul %a, %b, %sa, %s outs %d {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (memref<128x256xf8E4M3FN>, memref<64x256xf8E4M3FN>, memref<f32, 3>, memref<f32>, memref<128x64xbf16>) -> ()
  return
}

// -----

func.func @accumulate_in_place(%a: memref<128x256xf8E4M3FN>, %b: memref<64x256xf8E4M3FN>, %s: memref<f32>, %c: memref<128x64xf32>) {
  // expected-error @+1 {{'fp8.scaled_matmul' op accumulate_into (C) is also an output buffer (outs): the kernel reads its operands while it writes its outputs, so each output needs a buffer of its own}}
  fp8.scaled_matmul %a, %b, %s, %s accumulate_into %c outs %c {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (memref<128x256xf8E4M3FN>, memref<64x256xf8E4M3FN>, memref<f32>, memref<f32>, memref<128x64xf32>, memref<128x64xf32>) -> ()
  return
}

// -----

func.func @amax_into_a_scale(%a: memref<128x256xf8E4M3FN>, %b: memref<64x256xf8E4M3FN>, %s: memref<f32>, %d: memref<128x64xbf16>) {
  // expected-error @+1 {{'fp8.scaled_matmul' op a_scale_inv is also an output buffer (amax_outs)}}
  fp8.scaled_matmul %a, %b, %s, %s outs %d amax_outs %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (memref<128x256xf8E4M3FN>, memref<64x256xf8E4M3FN>, memref<f32>, memref<f32>, memref<128x64xbf16>, memref<f32>) -> ()
  return
}

//===----------------------------------------------------------------------===//
// Parameters: tiles and promotion intervals are extents; shapes computed from
// them do not overflow.
//===----------------------------------------------------------------------===//

// -----

// tile 2^62 x (2^63 - 1) once gave the scale shape [1, 0] by overflow.
func.func @tile_beyond_extents(%q: tensor<128x256xf8E4M3FN>, %s: tensor<1x1xf32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{expected a tile shape with extents of at most 2^31 - 1 = 2147483647 (tensor extents), got 4611686018427387904x9223372036854775807}}
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 4611686018427387904x9223372036854775807>} : tensor<128x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x256xbf16>
  return %y : tensor<128x256xbf16>
}

// -----

// The largest tile: one scale, shape [1, 1].
func.func @largest_tile(%q: tensor<128x256xf8E4M3FN>, %s: tensor<1x1xf32>) -> tensor<128x256xbf16> {
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 2147483647x2147483647>} : tensor<128x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x256xbf16>
  return %y : tensor<128x256xbf16>
}

// -----

// ... and a [1, 0] scale tensor for it is an empty tensor.
func.func @largest_tile_empty_scale(%q: tensor<128x256xf8E4M3FN>, %s: tensor<1x0xf32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{'fp8.dequantize' op dimension 1 of scale_inv (tensor<1x0xf32>) is 0}}
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 2147483647x2147483647>} : tensor<128x256xf8E4M3FN>, tensor<1x0xf32> -> tensor<128x256xbf16>
  return %y : tensor<128x256xbf16>
}

// -----

// The scale shape at the largest extents: ceil(2147483647 / 128) = 16777216.
func.func @largest_extent_scales(%x: tensor<16x2147483647xbf16>) -> (tensor<16x2147483647xf8E4M3FN>, tensor<16x16777216xf32>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<16x2147483647xbf16> -> rowwise(tensor<16x2147483647xf8E4M3FN>, tensor<16x16777216xf32>)
  return %q, %s : tensor<16x2147483647xf8E4M3FN>, tensor<16x16777216xf32>
}

// -----

// expected-error @+2 {{expected accumulation promoted(N) with N a positive multiple of 32 (the MMA K step), got promoted(0)}}
// expected-error @+1 {{failed to parse FP8_AccumulationAttr parameter 'mode'}}
func.func private @promoted_zero() attributes {a = #fp8.accumulation<promoted(0)>}

// -----

// expected-error @+1 {{expected accumulation promoted(N) with N at most 2^31 - 1 = 2147483647 (a K extent), got promoted(1099511627776)}}
func.func private @promoted_2pow40() attributes {a = #fp8.accumulation<promoted(1099511627776)>}

// -----

// expected-error @+1 {{expected an activation tile with extents of at most 2^31 - 1 = 2147483647 (tensor extents), got 1x4294967296}}
func.func private @act_tile_2pow32() attributes {r = #fp8.blockwise<act = 1x4294967296, weight = 128x4294967296, accumulate = promoted(128)>}

// -----

// expected-error @+1 {{expected a weight tile with extents of at most 2^31 - 1 = 2147483647 (tensor extents), got 1099511627776x128}}
func.func private @weight_tile_2pow40() attributes {r = #fp8.blockwise<weight = 1099511627776x128>}

// -----

// expected-error @+1 {{expected a tile M of at most 256 (the largest the sm_90a and sm_100a kernels take), got 1099511627776}}
func.func private @config_tile_m() attributes {c = #fp8.gemm_config<tile = 1099511627776x128x128>}

// -----

// expected-error @+1 {{expected a raster_group of at most 65535 (tile rows walked together), got 4294967296}}
func.func private @config_raster_group() attributes {c = #fp8.gemm_config<tile = 128x128x128, raster_group = 4294967296>}

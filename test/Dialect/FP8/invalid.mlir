// RUN: fp8-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

// expected-error @+1 {{expected accumulation promoted(N) with N a positive multiple of 32 (the MMA K step), got promoted(48)}}
func.func private @accumulation_not_k_step() attributes {a = #fp8.accumulation<promoted(48)>}

// -----

// expected-error @+2 {{expected accumulation 'fast' or 'promoted(N)', got 'slow'}}
// expected-error @+1 {{failed to parse FP8_AccumulationAttr parameter 'mode'}}
func.func private @accumulation_keyword() attributes {a = #fp8.accumulation<slow>}

// -----

// expected-error @+1 {{expected granularity 'tensor', 'row', 'tile RxC' or 'mx 1x32', got 'block'}}
func.func private @granularity_kind() attributes {g = #fp8.granularity<block 1x128>}

// -----

// expected-error @+1 {{expected a tile shape with positive extents, got 0x128}}
func.func private @granularity_empty_tile() attributes {g = #fp8.granularity<tile 0x128>}

// -----

// expected-error @+1 {{expected a 2-D tile shape RxC of positive integers, got 3 dimension(s)}}
func.func private @granularity_3d_tile() attributes {g = #fp8.granularity<tile 1x2x128>}

// -----

// expected-error @+1 {{expected MX blocks of 1x32 (OCP MX v1.0), got 1x16}}
func.func private @granularity_mx16() attributes {g = #fp8.granularity<mx 1x16>}

// -----

// expected-error @+1 {{expected an amax history length in [1, 65536], got 0}}
func.func private @delayed_history() attributes {r = #fp8.delayed<history = 0>}

// -----

// expected-error @+1 {{expected a margin in [0, 64], got 65}}
func.func private @delayed_margin() attributes {r = #fp8.delayed<margin = 65>}

// -----

// expected-error @+1 {{expected accumulation promoted(N) with N a positive multiple of 32 (the MMA K step), got promoted(-32)}}
func.func private @delayed_accumulate() attributes {r = #fp8.delayed<accumulate = promoted(-32)>}

// -----

// expected-error @+1 {{expected a finite, non-negative epsilon}}
func.func private @current_epsilon() attributes {r = #fp8.current<epsilon = -1.0>}

// -----

// expected-error @+1 {{expected an activation tile 1xN with N a positive multiple of 32, got 2x128}}
func.func private @blockwise_act() attributes {r = #fp8.blockwise<act = 2x128>}

// -----

// expected-error @+1 {{expected a weight tile Rx128 (same K extent as the activation tile), got 128x64}}
func.func private @blockwise_weight() attributes {r = #fp8.blockwise<weight = 128x64>}

// -----

// expected-error @+1 {{expected a finite, non-negative amax_clamp}}
func.func private @blockwise_clamp() attributes {r = #fp8.blockwise<amax_clamp = -1.0e-4>}

// -----

// expected-error @+1 {{expected accumulation promoted(N) with N a positive multiple of 32 (the MMA K step), got promoted(40)}}
func.func private @blockwise_accumulate_step() attributes {r = #fp8.blockwise<accumulate = promoted(40)>}

// -----

// expected-error @+1 {{blockwise scales change every 128 K elements: expected accumulation promoted(N) with N dividing 128}}
func.func private @blockwise_fast() attributes {r = #fp8.blockwise<accumulate = fast>}

// -----

// expected-error @+1 {{expected an MX block size of 32 (OCP MX v1.0), got 16}}
func.func private @mx_block() attributes {r = #fp8.mxfp8<block = 16>}

// -----

// expected-error @+1 {{expected accumulation promoted(N) with N a positive multiple of 32 (the MMA K step), got promoted(1)}}
func.func private @mx_accumulate() attributes {r = #fp8.mxfp8<accumulate = promoted(1)>}

// -----

// expected-error @+1 {{expected accumulation promoted(N) with N a positive multiple of 32 (the MMA K step), got promoted(7)}}
func.func private @current_accumulate() attributes {r = #fp8.current<accumulate = promoted(7)>}

// -----

//===----------------------------------------------------------------------===//
// fp8.compute_scale
//===----------------------------------------------------------------------===//

func.func @compute_scale_format(%amax: tensor<f32>) {
  // expected-error @+1 {{element type 'f8E5M2' of element_type is not allowed by recipe #fp8.current<format = e4m3>: expected f8E4M3FN}}
  %s, %si = fp8.compute_scale %amax {recipe = #fp8.current<format = e4m3>, element_type = f8E5M2} : tensor<f32> -> tensor<f32>, tensor<f32>
  return
}

// -----

func.func @compute_scale_element_type_constraint(%amax: tensor<f32>) {
  // expected-error @+1 {{attribute 'element_type' failed to satisfy constraint}}
  %s, %si = fp8.compute_scale %amax {recipe = #fp8.current<>, element_type = bf16} : tensor<f32> -> tensor<f32>, tensor<f32>
  return
}

// -----

func.func @compute_scale_history_length(%h: tensor<8xf32>, %prev: tensor<f32>) {
  // expected-error @+1 {{expected an amax history of shape [16] (the recipe's history length), got [8]}}
  %s, %si, %n = fp8.compute_scale %h, %prev {recipe = #fp8.delayed<history = 16>, element_type = f8E4M3FN} : tensor<8xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<8xf32>
  return
}

// -----

func.func @compute_scale_delayed_needs_previous(%h: tensor<16xf32>) {
  // expected-error @+1 {{delayed scaling requires previous_scale (kept when the history's amax is zero or not finite)}}
  %s, %si, %n = "fp8.compute_scale"(%h) <{recipe = #fp8.delayed<history = 16>, element_type = f8E4M3FN}> : (tensor<16xf32>) -> (tensor<f32>, tensor<f32>, tensor<16xf32>)
  return
}

// -----

func.func @compute_scale_delayed_needs_next_history(%h: tensor<16xf32>, %prev: tensor<f32>) {
  // expected-error @+1 {{delayed scaling expects a next_history result of type 'tensor<16xf32>'}}
  %s, %si = fp8.compute_scale %h, %prev {recipe = #fp8.delayed<history = 16>, element_type = f8E4M3FN} : tensor<16xf32>, tensor<f32> -> tensor<f32>, tensor<f32>
  return
}

// -----

func.func @compute_scale_current_rank(%amax: tensor<4xf32>) {
  // expected-error @+1 {{current scaling expects a tensor<f32> amax, got 'tensor<4xf32>'}}
  %s, %si = fp8.compute_scale %amax {recipe = #fp8.current<>, element_type = f8E4M3FN} : tensor<4xf32> -> tensor<f32>, tensor<f32>
  return
}

// -----

func.func @compute_scale_current_previous(%amax: tensor<f32>) {
  // expected-error @+1 {{previous_scale is only used by delayed scaling}}
  %s, %si = fp8.compute_scale %amax, %amax {recipe = #fp8.current<>, element_type = f8E4M3FN} : tensor<f32>, tensor<f32> -> tensor<f32>, tensor<f32>
  return
}

// -----

func.func @compute_scale_current_next_history(%amax: tensor<f32>) {
  // expected-error @+1 {{next_history is only produced by delayed scaling}}
  %s, %si, %n = fp8.compute_scale %amax {recipe = #fp8.current<>, element_type = f8E4M3FN} : tensor<f32> -> tensor<f32>, tensor<f32>, tensor<16xf32>
  return
}

// -----

func.func @compute_scale_blockwise(%amax: tensor<f32>) {
  // expected-error @+1 {{computes per-tensor scales (#fp8.delayed, #fp8.current); blockwise and MXFP8 scales are computed per block by fp8.quantize}}
  %s, %si = fp8.compute_scale %amax {recipe = #fp8.blockwise<>, element_type = f8E4M3FN} : tensor<f32> -> tensor<f32>, tensor<f32>
  return
}

// -----

func.func @compute_scale_recipe_constraint(%amax: tensor<f32>) {
  // expected-error @+1 {{attribute 'recipe' failed to satisfy constraint: FP8 recipe attribute}}
  %s, %si = fp8.compute_scale %amax {recipe = 1 : i32, element_type = f8E4M3FN} : tensor<f32> -> tensor<f32>, tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// fp8.update_amax_history
//===----------------------------------------------------------------------===//

func.func @update_history_recipe(%h: tensor<16xf32>, %amax: tensor<f32>) {
  // expected-error @+1 {{expected a #fp8.delayed recipe (only delayed scaling keeps an amax history)}}
  %0 = fp8.update_amax_history %h, %amax {recipe = #fp8.current<>} : tensor<16xf32>, tensor<f32>
  return
}

// -----

func.func @update_history_length(%h: tensor<16xf32>, %amax: tensor<f32>) {
  // expected-error @+1 {{expected an amax history of shape [1024] (the recipe's history length), got [16]}}
  %0 = fp8.update_amax_history %h, %amax {recipe = #fp8.delayed<>} : tensor<16xf32>, tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// fp8.quantize
//===----------------------------------------------------------------------===//

func.func @quantize_no_output(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{expected at least one of the rowwise and columnwise outputs}}
  "fp8.quantize"(%x) <{recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>, resultSegmentSizes = array<i32: 0, 0, 0, 0, 0>}> : (tensor<128x256xbf16>) -> ()
  return
}

// -----

func.func @quantize_rowwise_pair(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{expected the rowwise data and rowwise_scale_inv results together}}
  %q = "fp8.quantize"(%x) <{recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0>}> : (tensor<128x256xbf16>) -> (tensor<128x256xf8E4M3FN>)
  return
}

// -----

func.func @quantize_columnwise_pair(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{expected the columnwise data and columnwise_scale_inv results together}}
  %q, %s, %st = "fp8.quantize"(%x) <{recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>, resultSegmentSizes = array<i32: 1, 1, 0, 1, 0>}> : (tensor<128x256xbf16>) -> (tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x1xf32>)
  return
}

// -----

func.func @quantize_granularity_for_recipe(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{granularity mx 1x32 is not allowed by recipe #fp8.blockwise<>: expected the recipe's act or weight tile}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<mx 1x32>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
  return
}

// -----

func.func @quantize_delayed_row(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{granularity row is not allowed by recipe #fp8.delayed<>: expected tensor}}
  %q, %s = fp8.quantize %x {recipe = #fp8.delayed<>, granularity = #fp8.granularity<row>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x1xf32>)
  return
}

// -----

func.func @quantize_current_tile(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{granularity tile 1x128 is not allowed by recipe #fp8.current<>: expected tensor or row}}
  %q, %s = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf32>)
  return
}

// -----

func.func @quantize_mx_tensor(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{granularity tensor is not allowed by recipe #fp8.mxfp8<>: expected mx 1x32}}
  %q, %s = fp8.quantize %x {recipe = #fp8.mxfp8<>, granularity = #fp8.granularity<tensor>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<f32>)
  return
}

// -----

func.func @quantize_delayed_needs_scale(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{delayed scaling requires a scale operand (from fp8.compute_scale of the previous step)}}
  %q, %s = fp8.quantize %x {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<f32>)
  return
}

// -----

func.func @quantize_scale_per_row(%x: tensor<128x256xbf16>, %scale: tensor<f32>) {
  // expected-error @+1 {{a scale operand is only accepted for per-tensor granularity; granularity row computes one scale per block}}
  %q, %s = fp8.quantize %x scale %scale {recipe = #fp8.current<>, granularity = #fp8.granularity<row>} : tensor<128x256xbf16>, tensor<f32> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x1xf32>)
  return
}

// -----

func.func @quantize_amax_per_block(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{an amax result is only produced for per-tensor granularity}}
  %q, %s, %a = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf32>) amax(tensor<f32>)
  return
}

// -----

func.func @quantize_tile_rank(%x: tensor<4x128x256xbf16>) {
  // expected-error @+1 {{expected a 2-D input for granularity tile 1x128, got rank 3}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<4x128x256xbf16> -> rowwise(tensor<4x128x256xf8E4M3FN>, tensor<128x2xf32>)
  return
}

// -----

func.func @quantize_columnwise_rank(%x: tensor<4x128x256xbf16>, %scale: tensor<f32>) {
  // expected-error @+1 {{expected a 2-D input for a columnwise output, got rank 3}}
  %q, %s = fp8.quantize %x scale %scale {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>} : tensor<4x128x256xbf16>, tensor<f32> -> columnwise(tensor<256x128xf8E4M3FN>, tensor<f32>)
  return
}

// -----

func.func @quantize_rowwise_shape(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{expected rowwise data of shape [128, 256] (the input's), got [128, 128]}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xbf16> -> rowwise(tensor<128x128xf8E4M3FN>, tensor<128x2xf32>)
  return
}

// -----

func.func @quantize_rowwise_format(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{element type 'f8E5M2' of rowwise data is not allowed by recipe #fp8.blockwise<>: expected f8E4M3FN}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E5M2>, tensor<128x2xf32>)
  return
}

// -----

func.func @quantize_scale_shape_tail(%x: tensor<130x300xbf16>) {
  // expected-error @+1 {{expected rowwise_scale_inv of shape [2, 3] (granularity tile 128x128 of a [130, 300] operand), got [1, 2]}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>} : tensor<130x300xbf16> -> rowwise(tensor<130x300xf8E4M3FN>, tensor<1x2xf32>)
  return
}

// -----

func.func @quantize_mx_scale_type(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{expected rowwise_scale_inv of element type f8E8M0FNU (UE8M0 MX scales), got 'f32'}}
  %q, %s = fp8.quantize %x {recipe = #fp8.mxfp8<>, granularity = #fp8.granularity<mx 1x32>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x8xf32>)
  return
}

// -----

func.func @quantize_row_scale_type(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{expected rowwise_scale_inv of element type f32 for granularity row, got 'f8E8M0FNU'}}
  %q, %s = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<row>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x1xf8E8M0FNU>)
  return
}

// -----

func.func @quantize_e8m0_needs_pow2(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{expected rowwise_scale_inv of element type f32: f8E8M0FNU holds only power-of-two scales, and the recipe has scales = f32}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<scales = f32>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf8E8M0FNU>)
  return
}

// -----

func.func @quantize_columnwise_shape(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{expected columnwise data of shape [256, 128] (the transposed input), got [128, 256]}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xbf16> -> columnwise(tensor<128x256xf8E4M3FN>, tensor<256x1xf32>)
  return
}

// -----

func.func @quantize_columnwise_untransposed_shape(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{expected columnwise data of shape [128, 256] (the input's, untransposed), got [256, 128]}}
  %q, %s = fp8.quantize %x {recipe = #fp8.mxfp8<>, granularity = #fp8.granularity<mx 1x32>, columnwise_layout = #fp8.columnwise_layout<untransposed>} : tensor<128x256xbf16> -> columnwise(tensor<256x128xf8E4M3FN>, tensor<256x4xf8E8M0FNU>)
  return
}

// -----

func.func @quantize_mixed_formats(%x: tensor<128x256xbf16>, %scale: tensor<f32>) {
  // expected-error @+1 {{expected rowwise and columnwise data of the same element type, got 'f8E4M3FN' and 'f8E5M2'}}
  %q, %s, %qt, %st = fp8.quantize %x scale %scale {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<128x256xbf16>, tensor<f32> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<f32>) columnwise(tensor<256x128xf8E5M2>, tensor<f32>)
  return
}

// -----

func.func @quantize_columnwise_format(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{element type 'f8E5M2' of columnwise data is not allowed by recipe #fp8.mxfp8<>: expected f8E4M3FN}}
  %q, %s = fp8.quantize %x {recipe = #fp8.mxfp8<>, granularity = #fp8.granularity<mx 1x32>} : tensor<128x256xbf16> -> columnwise(tensor<256x128xf8E5M2>, tensor<256x4xf8E8M0FNU>)
  return
}

// -----

func.func @quantize_columnwise_scale_shape(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{expected columnwise_scale_inv of shape [256, 4] (granularity mx 1x32 of a [256, 128] operand), got [128, 8]}}
  %q, %s = fp8.quantize %x {recipe = #fp8.mxfp8<>, granularity = #fp8.granularity<mx 1x32>} : tensor<128x256xbf16> -> columnwise(tensor<256x128xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
  return
}

// -----

func.func @quantize_input_type(%x: tensor<128x256xi8>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of bfloat16 type or 16-bit float or 32-bit float values}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xi8> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// fp8.dequantize
//===----------------------------------------------------------------------===//

func.func @dequantize_shape(%q: tensor<128x256xf8E4M3FN>, %s: tensor<128x2xf32>) {
  // expected-error @+1 {{expected a result of the input's shape [128, 256], got [256, 128]}}
  %0 = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xf8E4M3FN>, tensor<128x2xf32> -> tensor<256x128xbf16>
  return
}

// -----

func.func @dequantize_rank(%q: tensor<2x128x256xf8E4M3FN>, %s: tensor<128x2xf32>) {
  // expected-error @+1 {{expected a 2-D input for granularity tile 1x128, got rank 3}}
  %0 = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 1x128>} : tensor<2x128x256xf8E4M3FN>, tensor<128x2xf32> -> tensor<2x128x256xbf16>
  return
}

// -----

func.func @dequantize_scale_shape(%q: tensor<128x256xf8E4M3FN>, %s: tensor<128x2xf8E8M0FNU>) {
  // expected-error @+1 {{expected scale_inv of shape [128, 8] (granularity mx 1x32 of a [128, 256] operand), got [128, 2]}}
  %0 = fp8.dequantize %q, %s {granularity = #fp8.granularity<mx 1x32>} : tensor<128x256xf8E4M3FN>, tensor<128x2xf8E8M0FNU> -> tensor<128x256xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// fp8.scaled_matmul
//===----------------------------------------------------------------------===//

func.func @matmul_k(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x512xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{expected A and B to have the same K: A is K-major [M, K] [128, 256] with K = 256, B is K-major [N, K] [64, 512] with K = 512}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x512xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return
}

// -----

func.func @matmul_k_mn_major(%a: tensor<256x128xf8E4M3FN>, %b: tensor<512x64xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{expected A and B to have the same K: A is MN-major [K, M] [256, 128] with K = 256, B is MN-major [K, N] [512, 64] with K = 512}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, a_major = #fp8.major<mn>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<256x128xf8E4M3FN>, tensor<512x64xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return
}

// -----

func.func @matmul_result_shape(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{expected a result of shape [M, N] = [128, 64], got [64, 128]}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<64x128xbf16>
  return
}

// -----

func.func @matmul_granularity_classes(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %sb: tensor<f32>) {
  // expected-error @+1 {{expected both scale granularities per-tensor or per-row, both blockwise tiles, or both MX; got tile 1x128 and tensor}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<128x2xf32>, tensor<f32>) -> tensor<128x64xbf16>
  return
}

// -----

func.func @matmul_tile_k(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %sb: tensor<1x4xf32>) {
  // expected-error @+1 {{expected A's and B's scale tiles to span the same K extent, got 128 and 64}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 64x64>, accumulation = #fp8.accumulation<promoted(64)>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<128x2xf32>, tensor<1x4xf32>) -> tensor<128x64xbf16>
  return
}

// -----

func.func @matmul_a_scale_shape(%a: tensor<4096x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<56x4096xf32>, %sb: tensor<17x56xf32>) {
  // expected-error @+1 {{expected a_scale_inv of shape [4096, 56] (granularity tile 1x128 of a [4096, 7168] operand), got [56, 4096]}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<4096x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<56x4096xf32>, tensor<17x56xf32>) -> tensor<4096x2112xbf16>
  return
}

// -----

func.func @matmul_b_scale_shape(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<128x1xf32>, %sb: tensor<1x64xf32>) {
  // expected-error @+1 {{expected b_scale_inv of shape [64, 1] (granularity row of a [64, 256] operand), got [1, 64]}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<128x1xf32>, tensor<1x64xf32>) -> tensor<128x64xbf16>
  return
}

// -----

func.func @matmul_blockwise_fast(%a: tensor<128x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %sb: tensor<1x2xf32>) {
  // expected-error @+1 {{blockwise scales change every 128 K elements: expected accumulation promoted(N) with N dividing 128}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<1x2xf32>) -> tensor<128x128xbf16>
  return
}

// -----

func.func @matmul_blockwise_interval(%a: tensor<128x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>, %sa: tensor<128x2xf32>, %sb: tensor<1x2xf32>) {
  // expected-error @+1 {{blockwise scales change every 128 K elements: expected accumulation promoted(N) with N dividing 128}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(256)>} : (tensor<128x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<1x2xf32>) -> tensor<128x128xbf16>
  return
}

// -----

func.func @matmul_bias_shape(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>, %bias: tensor<128xbf16>) {
  // expected-error @+1 {{expected a bias of shape [N] = [64], got [128]}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s bias %bias {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<128xbf16>) -> tensor<128x64xbf16>
  return
}

// -----

func.func @matmul_accumulate_bf16(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>, %c: tensor<128x64xf32>) {
  // expected-error @+1 {{accumulate_into requires an f32 result (wgrad accumulates in f32), got 'bf16'}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s accumulate_into %c {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<128x64xf32>) -> tensor<128x64xbf16>
  return
}

// -----

func.func @matmul_accumulate_type(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>, %c: tensor<64x128xf32>) {
  // expected-error @+1 {{expected the accumulate_into operand to have the result type 'tensor<128x64xf32>', got 'tensor<64x128xf32>'}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s accumulate_into %c {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<64x128xf32>) -> tensor<128x64xf32>
  return
}

// -----

func.func @matmul_recipe_granularity(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<128x1xf32>, %sb: tensor<64x1xf32>) {
  // expected-error @+1 {{granularity row of A is not allowed by recipe #fp8.delayed<>: expected tensor}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>, recipe = #fp8.delayed<>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<128x1xf32>, tensor<64x1xf32>) -> tensor<128x64xbf16>
  return
}

// -----

func.func @matmul_recipe_format(%a: tensor<128x256xf8E5M2>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{element type 'f8E5M2' of A is not allowed by recipe #fp8.current<format = e4m3>: expected f8E4M3FN}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, recipe = #fp8.current<format = e4m3>} : (tensor<128x256xf8E5M2>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return
}

// -----

func.func @matmul_mx_scale_type(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<128x8xf32>, %sb: tensor<64x8xf8E8M0FNU>) {
  // expected-error @+1 {{expected a_scale_inv of element type f8E8M0FNU (UE8M0 MX scales), got 'f32'}}
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<128x8xf32>, tensor<64x8xf8E8M0FNU>) -> tensor<128x64xbf16>
  return
}

// -----

func.func @matmul_operand_rank(%a: tensor<2x128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of f8E4M3FN type or f8E5M2 type values}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<2x128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xbf16>
  return
}

// -----

func.func @matmul_output_type(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{result #0 must be 2D tensor of bfloat16 type or 16-bit float or 32-bit float or f8E4M3FN type or f8E5M2 type values}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<128x64xi8>
  return
}

// -----

func.func @matmul_memref_result(%a: memref<128x256xf8E4M3FN>, %b: memref<64x256xf8E4M3FN>, %s: memref<f32>, %d: memref<128x64xbf16>) {
  // expected-error @+1 {{expected a result on tensors or an `outs` buffer on memrefs, not both or neither}}
  %0 = "fp8.scaled_matmul"(%a, %b, %s, %s, %d) <{a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 0>, resultSegmentSizes = array<i32: 1, 0, 0>}> : (memref<128x256xf8E4M3FN>, memref<64x256xf8E4M3FN>, memref<f32>, memref<f32>, memref<128x64xbf16>) -> tensor<128x64xbf16>
  return
}

// -----

func.func @matmul_memref_without_outs(%a: memref<128x256xf8E4M3FN>, %b: memref<64x256xf8E4M3FN>, %s: memref<f32>) {
  // expected-error @+1 {{expected every operand to be a tensor (memrefs need an `outs` buffer)}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (memref<128x256xf8E4M3FN>, memref<64x256xf8E4M3FN>, memref<f32>, memref<f32>) -> tensor<128x64xbf16>
  return
}

// -----

func.func @matmul_mixed_with_outs(%a: tensor<128x256xf8E4M3FN>, %b: memref<64x256xf8E4M3FN>, %s: memref<f32>, %d: memref<128x64xbf16>) {
  // expected-error @+1 {{expected every operand to be a memref with an `outs` buffer}}
  fp8.scaled_matmul %a, %b, %s, %s outs %d {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, memref<64x256xf8E4M3FN>, memref<f32>, memref<f32>, memref<128x64xbf16>) -> ()
  return
}

// -----

func.func @matmul_memref_shape(%a: memref<128x256xf8E4M3FN>, %b: memref<64x256xf8E4M3FN>, %s: memref<f32>, %d: memref<128x32xbf16>) {
  // expected-error @+1 {{expected a result of shape [M, N] = [128, 64], got [128, 32]}}
  fp8.scaled_matmul %a, %b, %s, %s outs %d {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (memref<128x256xf8E4M3FN>, memref<64x256xf8E4M3FN>, memref<f32>, memref<f32>, memref<128x32xbf16>) -> ()
  return
}

// -----

//===----------------------------------------------------------------------===//
// #fp8.gemm_config
//===----------------------------------------------------------------------===//

// expected-error @+1 {{expected a tile M that is a positive multiple of 64 (one warpgroup MMA), got 96}}
func.func private @config_tile_m() attributes {c = #fp8.gemm_config<tile = 96x128x128>}

// -----

// expected-error @+1 {{expected a tile N that is a multiple of 8 in [8, 256], got 264}}
func.func private @config_tile_n() attributes {c = #fp8.gemm_config<tile = 128x264x128>}

// -----

// expected-error @+1 {{expected a tile K of 128 (the 128-byte swizzle span of FP8 and the blockwise scale block), got 64}}
func.func private @config_tile_k() attributes {c = #fp8.gemm_config<tile = 128x128x64>}

// -----

// expected-error @+1 {{expected 1 to 16 pipeline stages, got 0}}
func.func private @config_stages() attributes {c = #fp8.gemm_config<tile = 128x128x128, stages = 0>}

// -----

// expected-error @+1 {{expected a cluster of 1x1, 2x1 or 1x2, got 2x2}}
func.func private @config_cluster() attributes {c = #fp8.gemm_config<tile = 128x128x128, cluster = 2x2>}

// -----

// expected-error @+1 {{stream-K takes a 1x1 cluster, got 2x1}}
func.func private @config_stream_k_cluster() attributes {c = #fp8.gemm_config<tile = 128x128x128, cluster = 2x1, stream_k = true>}

// -----

// expected-error @+1 {{ping_pong gives each consumer whole tiles: it takes no stream-K}}
func.func private @config_ping_pong_stream_k() attributes {c = #fp8.gemm_config<tile = 128x128x128, stream_k = true, ping_pong = true>}

// -----

// expected-error @+1 {{ping_pong takes fast accumulation, which has no promotion_parts}}
func.func private @config_ping_pong_promotion_parts() attributes {c = #fp8.gemm_config<tile = 128x128x128, promotion_parts = 1, ping_pong = true>}

// -----

// expected-error @+1 {{expected a raster_group >= 1, got 0}}
func.func private @config_raster() attributes {c = #fp8.gemm_config<tile = 128x128x128, raster_group = 0>}

// -----

// expected-error @+1 {{expected promotion_parts 1 or 2 (0: the lowering decides), got 3}}
func.func private @config_promotion_parts() attributes {c = #fp8.gemm_config<tile = 128x128x128, promotion_parts = 3>}

// -----

// expected-error @+2 {{expected a GEMM tile MxNxK, got 2 dimension(s)}}
// expected-error @+1 {{failed to parse FP8_GemmConfigAttr parameter 'tile'}}
func.func private @config_tile_rank() attributes {c = #fp8.gemm_config<tile = 128x128>}

// -----

//===----------------------------------------------------------------------===//
// fp8.linear, fp8.linear_backward
//===----------------------------------------------------------------------===//

func.func @linear_k_mismatch(%x: tensor<4x64xbf16>, %w: tensor<8x32xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{expected the input [M, K] and the weight [N, K] to have the same K, got [4, 64] and [8, 32]}}
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<4x64xbf16>, tensor<8x32xbf16>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

func.func @linear_delayed_without_scales(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{delayed scaling requires `scales(...)`: the previous step's scale of each quantized tensor (2 operands)}}
  %y = fp8.linear %x, %w {recipe = #fp8.delayed<>} : (tensor<4x64xbf16>, tensor<8x64xbf16>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

func.func @linear_scales_without_delayed(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %s: tensor<f32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{scale operands are only accepted under per-tensor (delayed or current) scaling; recipe #fp8.blockwise<> computes its scales from the data}}
  %y = fp8.linear %x, %w scales(%s, %s) {recipe = #fp8.blockwise<>} : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<f32>, tensor<f32>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

func.func @linear_amax_without_delayed(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) -> (tensor<4x8xbf16>, tensor<f32>, tensor<f32>) {
  // expected-error @+1 {{amax results are only produced under delayed scaling}}
  %y, %a, %b = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<4x64xbf16>, tensor<8x64xbf16>) -> (tensor<4x8xbf16>, tensor<f32>, tensor<f32>)
  return %y, %a, %b : tensor<4x8xbf16>, tensor<f32>, tensor<f32>
}

// -----

func.func @linear_one_amax(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %s: tensor<f32>) -> (tensor<4x8xbf16>, tensor<f32>) {
  // expected-error @+1 {{expected no amax results or two (the input's and the weight's), got 1}}
  %y, %a = fp8.linear %x, %w scales(%s, %s) {recipe = #fp8.delayed<>} : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<f32>, tensor<f32>) -> (tensor<4x8xbf16>, tensor<f32>)
  return %y, %a : tensor<4x8xbf16>, tensor<f32>
}

// -----

func.func @linear_result_shape(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<4x16xbf16> {
  // expected-error @+1 {{expected a result of shape [M, N] = [4, 8], got [4, 16]}}
  %y = fp8.linear %x, %w {recipe = #fp8.current<>} : (tensor<4x64xbf16>, tensor<8x64xbf16>) -> tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}

// -----

func.func @linear_bias_shape(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %b: tensor<4xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{expected a bias of shape [N] = [8], got [4]}}
  %y = fp8.linear %x, %w bias %b {recipe = #fp8.current<>} : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<4xf32>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

func.func @backward_grad_output_shape(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %dy: tensor<4x64xbf16>) -> (tensor<4x64xbf16>, tensor<8x64xf32>) {
  // expected-error @+1 {{expected grad_output of shape [M, N] = [4, 8], got [4, 64]}}
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>} : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<4x64xbf16>) -> (tensor<4x64xbf16>, tensor<8x64xf32>)
  return %dx, %dw : tensor<4x64xbf16>, tensor<8x64xf32>
}

// -----

func.func @backward_grad_weight_shape(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %dy: tensor<4x8xbf16>) -> (tensor<4x64xbf16>, tensor<64x8xf32>) {
  // expected-error @+1 {{expected grad_weight of shape [N, K] = [8, 64], got [64, 8]}}
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.current<>} : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<4x8xbf16>) -> (tensor<4x64xbf16>, tensor<64x8xf32>)
  return %dx, %dw : tensor<4x64xbf16>, tensor<64x8xf32>
}

// -----

func.func @backward_delayed_two_scales(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %dy: tensor<4x8xbf16>, %s: tensor<f32>) -> (tensor<4x64xbf16>, tensor<8x64xf32>) {
  // expected-error @+1 {{expected ','}}
  %dx, %dw = fp8.linear_backward %x, %w, %dy scales(%s, %s) {recipe = #fp8.delayed<>} : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<4x8xbf16>, tensor<f32>, tensor<f32>) -> (tensor<4x64xbf16>, tensor<8x64xf32>)
  return %dx, %dw : tensor<4x64xbf16>, tensor<8x64xf32>
}

// -----

func.func @backward_accumulate_type(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %dy: tensor<4x8xbf16>, %acc: tensor<8x64xbf16>) -> (tensor<4x64xbf16>, tensor<8x64xf32>) {
  // expected-error @+1 {{operand #3 must be 2D tensor of 32-bit float values}}
  %dx, %dw = fp8.linear_backward %x, %w, %dy accumulate_into %acc {recipe = #fp8.current<>} : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<4x8xbf16>, tensor<8x64xbf16>) -> (tensor<4x64xbf16>, tensor<8x64xf32>)
  return %dx, %dw : tensor<4x64xbf16>, tensor<8x64xf32>
}

// -----

func.func @backward_accumulate_bf16_dw(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %dy: tensor<4x8xbf16>, %acc: tensor<8x64xf32>) -> (tensor<4x64xbf16>, tensor<8x64xbf16>) {
  // expected-error @+1 {{expected grad_weight to have the accumulate_into type 'tensor<8x64xf32>' (the main gradient accumulates in f32), got 'tensor<8x64xbf16>'}}
  %dx, %dw = fp8.linear_backward %x, %w, %dy accumulate_into %acc {recipe = #fp8.current<>} : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<4x8xbf16>, tensor<8x64xf32>) -> (tensor<4x64xbf16>, tensor<8x64xbf16>)
  return %dx, %dw : tensor<4x64xbf16>, tensor<8x64xbf16>
}

// -----

func.func @activation_with_accumulate(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>, %c: tensor<128x64xf32>) -> tensor<128x64xf32> {
  // expected-error @+1 {{an activation cannot be fused with accumulate_into (it would apply to C + AB)}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s accumulate_into %c {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, activation = #fp8.activation<silu>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<128x64xf32>) -> tensor<128x64xf32>
  return %0 : tensor<128x64xf32>
}

// -----

func.func @amax_outs_on_tensors(%a: tensor<128x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>, %amax: memref<f32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{expected an `amax_outs` buffer only with an `outs` buffer}}
  %0 = fp8.scaled_matmul %a, %b, %s, %s amax_outs %amax {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<f32>, memref<f32>) -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// -----

func.func @quantize_scale_granularity_not_mx(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{expected scale_granularity mx 1x32, got tile 1x128}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>, scale_granularity = #fp8.granularity<tile 1x128>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf32>)
  return
}

// -----

func.func @quantize_scale_granularity_not_tiles(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{scale_granularity mx 1x32 expects tiles whose K extent is a multiple of 32, got mx 1x32}}
  %q, %s = fp8.quantize %x {recipe = #fp8.mxfp8<>, granularity = #fp8.granularity<mx 1x32>, scale_granularity = #fp8.granularity<mx 1x32>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
  return
}

// -----

func.func @quantize_scale_granularity_f32_scales(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{scale_granularity mx 1x32 expects #fp8.blockwise<scales = pow2> (UE8M0 holds power-of-two scales only)}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<scales = f32>, granularity = #fp8.granularity<tile 1x128>, scale_granularity = #fp8.granularity<mx 1x32>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
  return
}

// -----

func.func @quantize_scale_granularity_shape(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{expected rowwise_scale_inv of shape [128, 8] (granularity mx 1x32 of a [128, 256] operand), got [128, 2]}}
  %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>, scale_granularity = #fp8.granularity<mx 1x32>} : tensor<128x256xbf16> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x2xf8E8M0FNU>)
  return
}

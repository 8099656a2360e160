// RUN: fp8-opt %s | FileCheck %s
// Round trip through the generic form too.
// RUN: fp8-opt %s -mlir-print-op-generic | fp8-opt | FileCheck %s
// And through bytecode.
// RUN: fp8-opt %s -emit-bytecode | fp8-opt | FileCheck %s

//===----------------------------------------------------------------------===//
// Recipe attributes: defaults are elided, every parameter prints back.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func private @recipes()
// CHECK-SAME: b0 = #fp8.blockwise<>
// CHECK-SAME: b1 = #fp8.blockwise<act = 1x64, weight = 64x64, scales = f32, amax_clamp = 0.000000e+00, accumulate = promoted(32)>
// CHECK-SAME: c0 = #fp8.current<>
// CHECK-SAME: c1 = #fp8.current<epsilon = 9.99999996E-13, pow2 = true, format = e4m3, accumulate = promoted(64)>
// CHECK-SAME: d0 = #fp8.delayed<>
// CHECK-SAME: d1 = #fp8.delayed<history = 16, algo = most_recent, margin = 2, format = e4m3, accumulate = fast>
// CHECK-SAME: m0 = #fp8.mxfp8<>
// CHECK-SAME: m1 = #fp8.mxfp8<rounding = ocp, format = e5m2, accumulate = fast>
func.func private @recipes() attributes {
  d0 = #fp8.delayed<history = 1024, algo = max, margin = 0, format = hybrid, accumulate = promoted(128)>,
  d1 = #fp8.delayed<format = e4m3, history = 16, margin = 2, algo = most_recent, accumulate = fast>,
  c0 = #fp8.current<epsilon = 0.0, pow2 = false>,
  c1 = #fp8.current<epsilon = 1.0e-12, pow2 = true, format = e4m3, accumulate = promoted(64)>,
  b0 = #fp8.blockwise<act = 1x128, weight = 128x128, scales = pow2, amax_clamp = 1.0e-4>,
  b1 = #fp8.blockwise<act = 1x64, weight = 64x64, scales = f32, amax_clamp = 0.0, accumulate = promoted(32)>,
  m0 = #fp8.mxfp8<block = 32, rounding = round_up, format = e4m3>,
  m1 = #fp8.mxfp8<rounding = ocp, format = e5m2, accumulate = fast>
}

// CHECK-LABEL: func.func private @granularities()
// CHECK-SAME: a0 = #fp8.accumulation<fast>
// CHECK-SAME: a1 = #fp8.accumulation<promoted(128)>
// CHECK-SAME: c0 = #fp8.gemm_config<tile = 128x256x128>
// CHECK-SAME: c1 = #fp8.gemm_config<tile = 64x128x128, stages = 6, cluster = 2x1, raster_group = 16>
// CHECK-SAME: c2 = #fp8.gemm_config<tile = 128x192x128, stream_k = false>
// CHECK-SAME: c3 = #fp8.gemm_config<tile = 128x128x128, stages = 5, promotion_parts = 1>
// CHECK-SAME: g0 = #fp8.granularity<tensor>
// CHECK-SAME: g1 = #fp8.granularity<row>
// CHECK-SAME: g2 = #fp8.granularity<tile 1x128>
// CHECK-SAME: g3 = #fp8.granularity<tile 128x128>
// CHECK-SAME: g4 = #fp8.granularity<mx 1x32>
// CHECK-SAME: k0 = #fp8.major<mn>
// CHECK-SAME: l0 = #fp8.columnwise_layout<untransposed>
func.func private @granularities() attributes {
  g0 = #fp8.granularity<tensor>, g1 = #fp8.granularity<row>,
  g2 = #fp8.granularity<tile 1x128>, g3 = #fp8.granularity<tile 128x128>,
  g4 = #fp8.granularity<mx 1x32>,
  a0 = #fp8.accumulation<fast>, a1 = #fp8.accumulation<promoted(128)>,
  l0 = #fp8.columnwise_layout<untransposed>, k0 = #fp8.major<mn>,
  c0 = #fp8.gemm_config<tile = 128x256x128, stages = 4, cluster = 1x1, raster_group = 8>,
  c1 = #fp8.gemm_config<raster_group = 16, tile = 64x128x128, cluster = 2x1, stages = 6>,
  c2 = #fp8.gemm_config<stream_k = false, tile = 128x192x128>,
  c3 = #fp8.gemm_config<promotion_parts = 1, tile = 128x128x128, stages = 5>
}

//===----------------------------------------------------------------------===//
// Per-tensor scaling ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @amax
// CHECK: fp8.amax %{{.*}} : tensor<4096x7168xbf16> -> tensor<f32>
// CHECK: fp8.amax %{{.*}} : tensor<8x16x32xf16> -> tensor<f32>
// CHECK: fp8.amax %{{.*}} : tensor<?x7168xf32> -> tensor<f32>
func.func @amax(%x: tensor<4096x7168xbf16>, %y: tensor<8x16x32xf16>, %z: tensor<?x7168xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %0 = fp8.amax %x : tensor<4096x7168xbf16> -> tensor<f32>
  %1 = fp8.amax %y : tensor<8x16x32xf16> -> tensor<f32>
  %2 = fp8.amax %z : tensor<?x7168xf32> -> tensor<f32>
  return %0, %1, %2 : tensor<f32>, tensor<f32>, tensor<f32>
}

// CHECK-LABEL: func.func @current_scaling
// CHECK: fp8.compute_scale %{{.*}} {element_type = f8E4M3FN, recipe = #fp8.current<pow2 = true>} : tensor<f32> -> tensor<f32>, tensor<f32>
func.func @current_scaling(%amax: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %s, %si = fp8.compute_scale %amax {recipe = #fp8.current<pow2 = true>, element_type = f8E4M3FN} : tensor<f32> -> tensor<f32>, tensor<f32>
  return %s, %si : tensor<f32>, tensor<f32>
}

// CHECK-LABEL: func.func @delayed_scaling_step
// CHECK: %[[H:.*]] = fp8.update_amax_history %{{.*}}, %{{.*}} {recipe = #fp8.delayed<history = 16>} : tensor<16xf32>, tensor<f32>
// CHECK: fp8.compute_scale %[[H]], %{{.*}} {element_type = f8E5M2, recipe = #fp8.delayed<history = 16>} : tensor<16xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<16xf32>
func.func @delayed_scaling_step(%h: tensor<16xf32>, %amax: tensor<f32>, %prev: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<16xf32>) {
  %h1 = fp8.update_amax_history %h, %amax {recipe = #fp8.delayed<history = 16>} : tensor<16xf32>, tensor<f32>
  %s, %si, %next = fp8.compute_scale %h1, %prev {recipe = #fp8.delayed<history = 16>, element_type = f8E5M2} : tensor<16xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<16xf32>
  return %s, %si, %next : tensor<f32>, tensor<f32>, tensor<16xf32>
}

//===----------------------------------------------------------------------===//
// fp8.quantize: every granularity and output form
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @quantize_delayed
// CHECK: fp8.quantize %{{.*}} scale %{{.*}} {granularity = #fp8.granularity<tensor>, recipe = #fp8.delayed<>} : tensor<256x512xbf16>, tensor<f32> -> rowwise(tensor<256x512xf8E4M3FN>, tensor<f32>) columnwise(tensor<512x256xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
func.func @quantize_delayed(%x: tensor<256x512xbf16>, %scale: tensor<f32>) -> tensor<f32> {
  %q, %s, %qt, %st, %amax = fp8.quantize %x scale %scale {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<256x512xbf16>, tensor<f32> -> rowwise(tensor<256x512xf8E4M3FN>, tensor<f32>) columnwise(tensor<512x256xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
  return %amax : tensor<f32>
}

// CHECK-LABEL: func.func @quantize_current_fused
// CHECK: fp8.quantize %{{.*}} {granularity = #fp8.granularity<tensor>, recipe = #fp8.current<>} : tensor<8x16x32xf32> -> rowwise(tensor<8x16x32xf8E5M2>, tensor<f32>) amax(tensor<f32>)
func.func @quantize_current_fused(%x: tensor<8x16x32xf32>) -> tensor<8x16x32xf8E5M2> {
  %q, %s, %amax = fp8.quantize %x {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>} : tensor<8x16x32xf32> -> rowwise(tensor<8x16x32xf8E5M2>, tensor<f32>) amax(tensor<f32>)
  return %q : tensor<8x16x32xf8E5M2>
}

// CHECK-LABEL: func.func @quantize_rowwise_scaling
// CHECK: fp8.quantize %{{.*}} {granularity = #fp8.granularity<row>, recipe = #fp8.current<format = e4m3>} : tensor<?x7168xbf16> -> rowwise(tensor<?x7168xf8E4M3FN>, tensor<?x1xf32>)
func.func @quantize_rowwise_scaling(%x: tensor<?x7168xbf16>) -> tensor<?x7168xf8E4M3FN> {
  %q, %s = fp8.quantize %x {recipe = #fp8.current<format = e4m3>, granularity = #fp8.granularity<row>} : tensor<?x7168xbf16> -> rowwise(tensor<?x7168xf8E4M3FN>, tensor<?x1xf32>)
  return %q : tensor<?x7168xf8E4M3FN>
}

// Tails: ceil(130/128) = 2 row blocks, ceil(300/128) = 3 column blocks.
// CHECK-LABEL: func.func @quantize_blockwise
// CHECK: fp8.quantize %{{.*}} {granularity = #fp8.granularity<tile 1x128>, recipe = #fp8.blockwise<>} : tensor<130x300xbf16> -> rowwise(tensor<130x300xf8E4M3FN>, tensor<130x3xf32>) columnwise(tensor<300x130xf8E4M3FN>, tensor<300x2xf32>)
// CHECK: fp8.quantize %{{.*}} {granularity = #fp8.granularity<tile 128x128>, recipe = #fp8.blockwise<>} : tensor<130x300xbf16> -> rowwise(tensor<130x300xf8E4M3FN>, tensor<2x3xf8E8M0FNU>)
func.func @quantize_blockwise(%x: tensor<130x300xbf16>) -> (tensor<130x300xf8E4M3FN>, tensor<300x130xf8E4M3FN>, tensor<130x300xf8E4M3FN>) {
  %q, %s, %qt, %st = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>} : tensor<130x300xbf16> -> rowwise(tensor<130x300xf8E4M3FN>, tensor<130x3xf32>) columnwise(tensor<300x130xf8E4M3FN>, tensor<300x2xf32>)
  %w, %ws = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>} : tensor<130x300xbf16> -> rowwise(tensor<130x300xf8E4M3FN>, tensor<2x3xf8E8M0FNU>)
  return %q, %qt, %w : tensor<130x300xf8E4M3FN>, tensor<300x130xf8E4M3FN>, tensor<130x300xf8E4M3FN>
}

// Power-of-two blockwise scales given in the MX form of a block-scaled GEMM.
// CHECK-LABEL: func.func @quantize_blockwise_mx_scales
// CHECK: fp8.quantize %{{.*}} {columnwise_layout = #fp8.columnwise_layout<untransposed>, granularity = #fp8.granularity<tile 128x128>, recipe = #fp8.blockwise<>, scale_granularity = #fp8.granularity<mx 1x32>} : tensor<?x256xbf16> -> rowwise(tensor<?x256xf8E4M3FN>, tensor<?x8xf8E8M0FNU>) columnwise(tensor<?x256xf8E4M3FN>, tensor<256x?xf8E8M0FNU>)
func.func @quantize_blockwise_mx_scales(%x: tensor<?x256xbf16>) -> (tensor<?x8xf8E8M0FNU>, tensor<256x?xf8E8M0FNU>) {
  %q, %s, %qc, %sc = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 128x128>, columnwise_layout = #fp8.columnwise_layout<untransposed>, scale_granularity = #fp8.granularity<mx 1x32>} : tensor<?x256xbf16> -> rowwise(tensor<?x256xf8E4M3FN>, tensor<?x8xf8E8M0FNU>) columnwise(tensor<?x256xf8E4M3FN>, tensor<256x?xf8E8M0FNU>)
  return %s, %sc : tensor<?x8xf8E8M0FNU>, tensor<256x?xf8E8M0FNU>
}

// CHECK-LABEL: func.func @quantize_mxfp8
// CHECK: fp8.quantize %{{.*}} {columnwise_layout = #fp8.columnwise_layout<untransposed>, granularity = #fp8.granularity<mx 1x32>, recipe = #fp8.mxfp8<>} : tensor<256x100xf16> -> rowwise(tensor<256x100xf8E4M3FN>, tensor<256x4xf8E8M0FNU>) columnwise(tensor<256x100xf8E4M3FN>, tensor<100x8xf8E8M0FNU>)
func.func @quantize_mxfp8(%x: tensor<256x100xf16>) -> (tensor<256x100xf8E4M3FN>, tensor<256x100xf8E4M3FN>) {
  %q, %s, %qc, %sc = fp8.quantize %x {recipe = #fp8.mxfp8<>, granularity = #fp8.granularity<mx 1x32>, columnwise_layout = #fp8.columnwise_layout<untransposed>} : tensor<256x100xf16> -> rowwise(tensor<256x100xf8E4M3FN>, tensor<256x4xf8E8M0FNU>) columnwise(tensor<256x100xf8E4M3FN>, tensor<100x8xf8E8M0FNU>)
  return %q, %qc : tensor<256x100xf8E4M3FN>, tensor<256x100xf8E4M3FN>
}

//===----------------------------------------------------------------------===//
// fp8.dequantize
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @dequantize
// CHECK: fp8.dequantize %{{.*}}, %{{.*}} {granularity = #fp8.granularity<mx 1x32>} : tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU> -> tensor<128x256xbf16>
// CHECK: fp8.dequantize %{{.*}}, %{{.*}} {granularity = #fp8.granularity<tensor>} : tensor<4x8xf8E5M2>, tensor<f32> -> tensor<4x8xf32>
func.func @dequantize(%q: tensor<128x256xf8E4M3FN>, %s: tensor<128x8xf8E8M0FNU>, %q2: tensor<4x8xf8E5M2>, %s2: tensor<f32>) -> (tensor<128x256xbf16>, tensor<4x8xf32>) {
  %0 = fp8.dequantize %q, %s {granularity = #fp8.granularity<mx 1x32>} : tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU> -> tensor<128x256xbf16>
  %1 = fp8.dequantize %q2, %s2 {granularity = #fp8.granularity<tensor>} : tensor<4x8xf8E5M2>, tensor<f32> -> tensor<4x8xf32>
  return %0, %1 : tensor<128x256xbf16>, tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// fp8.scaled_matmul: each scale class, majors, bias and accumulate-into-C
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @matmul_tensorwise
// CHECK: fp8.scaled_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} {a_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, b_granularity = #fp8.granularity<tensor>, recipe = #fp8.delayed<>} : (tensor<?x7168xf8E4M3FN>, tensor<2048x7168xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<2048xbf16>) -> tensor<?x2048xbf16>
func.func @matmul_tensorwise(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2048x7168xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>, %bias: tensor<2048xbf16>) -> tensor<?x2048xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb bias %bias {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, recipe = #fp8.delayed<>} : (tensor<?x7168xf8E4M3FN>, tensor<2048x7168xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<2048xbf16>) -> tensor<?x2048xbf16>
  return %0 : tensor<?x2048xbf16>
}

// CHECK-LABEL: func.func @matmul_rowwise_hybrid
// CHECK: fp8.scaled_matmul {{.*}} {a_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<row>} : (tensor<128x256xf8E5M2>, tensor<64x256xf8E4M3FN>, tensor<128x1xf32>, tensor<64x1xf32>) -> tensor<128x64xf16>
func.func @matmul_rowwise_hybrid(%a: tensor<128x256xf8E5M2>, %b: tensor<64x256xf8E4M3FN>, %sa: tensor<128x1xf32>, %sb: tensor<64x1xf32>) -> tensor<128x64xf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<128x256xf8E5M2>, tensor<64x256xf8E4M3FN>, tensor<128x1xf32>, tensor<64x1xf32>) -> tensor<128x64xf16>
  return %0 : tensor<128x64xf16>
}

// DeepSeek-V3 fprop shape: A 1x128 scales, B 128x128 scales, N tail (2112 = 16.5 x 128).
// CHECK-LABEL: func.func @matmul_blockwise
// CHECK: fp8.scaled_matmul {{.*}} : (tensor<4096x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<4096x56xf32>, tensor<17x56xf32>) -> tensor<4096x2112xbf16>
func.func @matmul_blockwise(%a: tensor<4096x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<4096x56xf32>, %sb: tensor<17x56xf32>) -> tensor<4096x2112xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<>} : (tensor<4096x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<4096x56xf32>, tensor<17x56xf32>) -> tensor<4096x2112xbf16>
  return %0 : tensor<4096x2112xbf16>
}

// wgrad on Blackwell: dW = dY^T X with both operands MN-major, accumulated into f32.
// CHECK-LABEL: func.func @matmul_wgrad_mx
// CHECK: fp8.scaled_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} accumulate_into %{{.*}} {a_granularity = #fp8.granularity<mx 1x32>, a_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>, b_granularity = #fp8.granularity<mx 1x32>, b_major = #fp8.major<mn>} : (tensor<4096x1024xf8E4M3FN>, tensor<4096x512xf8E4M3FN>, tensor<1024x128xf8E8M0FNU>, tensor<512x128xf8E8M0FNU>, tensor<1024x512xf32>) -> tensor<1024x512xf32>
func.func @matmul_wgrad_mx(%dy: tensor<4096x1024xf8E4M3FN>, %x: tensor<4096x512xf8E4M3FN>, %sdy: tensor<1024x128xf8E8M0FNU>, %sx: tensor<512x128xf8E8M0FNU>, %dw: tensor<1024x512xf32>) -> tensor<1024x512xf32> {
  %0 = fp8.scaled_matmul %dy, %x, %sdy, %sx accumulate_into %dw {a_granularity = #fp8.granularity<mx 1x32>, b_granularity = #fp8.granularity<mx 1x32>, a_major = #fp8.major<mn>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<fast>} : (tensor<4096x1024xf8E4M3FN>, tensor<4096x512xf8E4M3FN>, tensor<1024x128xf8E8M0FNU>, tensor<512x128xf8E8M0FNU>, tensor<1024x512xf32>) -> tensor<1024x512xf32>
  return %0 : tensor<1024x512xf32>
}

// CHECK-LABEL: func.func @matmul_bias_and_accumulate
// CHECK: fp8.scaled_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} accumulate_into %{{.*}} {{.*}} : (tensor<64x128xf8E4M3FN>, tensor<32x128xf8E4M3FN>, tensor<f32>, tensor<32x1xf32>, tensor<32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
func.func @matmul_bias_and_accumulate(%a: tensor<64x128xf8E4M3FN>, %b: tensor<32x128xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<32x1xf32>, %bias: tensor<32xf32>, %c: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb bias %bias accumulate_into %c {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>} : (tensor<64x128xf8E4M3FN>, tensor<32x128xf8E4M3FN>, tensor<f32>, tensor<32x1xf32>, tensor<32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// The destination-passing form on memrefs (what bufferization produces).
// CHECK-LABEL: func.func @matmul_memref
// CHECK: fp8.scaled_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} outs %{{.*}} {a_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<tile 128x128>} : (memref<?x256xf8E4M3FN>, memref<128x256xf8E4M3FN>, memref<?x2xf32>, memref<1x2xf32>, memref<128xf32>, memref<?x128xbf16>) -> ()
func.func @matmul_memref(%a: memref<?x256xf8E4M3FN>, %b: memref<128x256xf8E4M3FN>, %sa: memref<?x2xf32>, %sb: memref<1x2xf32>, %bias: memref<128xf32>, %d: memref<?x128xbf16>) {
  fp8.scaled_matmul %a, %b, %sa, %sb bias %bias outs %d {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (memref<?x256xf8E4M3FN>, memref<128x256xf8E4M3FN>, memref<?x2xf32>, memref<1x2xf32>, memref<128xf32>, memref<?x128xbf16>) -> ()
  return
}

// fp8.linear / fp8.linear_backward: forward with bias, delayed scaling with
// scales and amaxes, backward with accumulate_into.
// CHECK-LABEL: func.func @linear_layer
// CHECK: fp8.linear %{{.*}}, %{{.*}} bias %{{.*}} {recipe = #fp8.blockwise<>} : (tensor<?x256xbf16>, tensor<128x256xbf16>, tensor<128xf32>) -> tensor<?x128xbf16>
// CHECK: fp8.linear %{{.*}}, %{{.*}} scales(%{{.*}}, %{{.*}}) {recipe = #fp8.delayed<>} : (tensor<?x256xbf16>, tensor<128x256xbf16>, tensor<f32>, tensor<f32>) -> (tensor<?x128xf32>, tensor<f32>, tensor<f32>)
// CHECK: fp8.linear_backward %{{.*}}, %{{.*}}, %{{.*}} accumulate_into %{{.*}} scales(%{{.*}}, %{{.*}}, %{{.*}}) {recipe = #fp8.delayed<>} : {{.*}} -> (tensor<?x256xbf16>, tensor<128x256xf32>, tensor<f32>)
func.func @linear_layer(%x: tensor<?x256xbf16>, %w: tensor<128x256xbf16>, %b: tensor<128xf32>, %dy: tensor<?x128xbf16>, %acc: tensor<128x256xf32>, %s: tensor<f32>) {
  %y = fp8.linear %x, %w bias %b {recipe = #fp8.blockwise<>} : (tensor<?x256xbf16>, tensor<128x256xbf16>, tensor<128xf32>) -> tensor<?x128xbf16>
  %y2, %ax, %aw = fp8.linear %x, %w scales(%s, %s) {recipe = #fp8.delayed<>} : (tensor<?x256xbf16>, tensor<128x256xbf16>, tensor<f32>, tensor<f32>) -> (tensor<?x128xf32>, tensor<f32>, tensor<f32>)
  %dx, %dw, %ady = fp8.linear_backward %x, %w, %dy accumulate_into %acc scales(%s, %s, %s) {recipe = #fp8.delayed<>} : (tensor<?x256xbf16>, tensor<128x256xbf16>, tensor<?x128xbf16>, tensor<128x256xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<?x256xbf16>, tensor<128x256xf32>, tensor<f32>)
  return
}

// dW in the weight's type (bf16), not accumulated.
// CHECK-LABEL: func.func @linear_backward_bf16_dw
// CHECK: fp8.linear_backward %{{.*}}, %{{.*}}, %{{.*}} {recipe = #fp8.blockwise<>} : {{.*}} -> (tensor<?x256xbf16>, tensor<128x256xbf16>)
func.func @linear_backward_bf16_dw(%x: tensor<?x256xbf16>, %w: tensor<128x256xbf16>, %dy: tensor<?x128xbf16>) -> (tensor<?x256xbf16>, tensor<128x256xbf16>) {
  %dx, %dw = fp8.linear_backward %x, %w, %dy {recipe = #fp8.blockwise<>} : (tensor<?x256xbf16>, tensor<128x256xbf16>, tensor<?x128xbf16>) -> (tensor<?x256xbf16>, tensor<128x256xbf16>)
  return %dx, %dw : tensor<?x256xbf16>, tensor<128x256xbf16>
}

// The output amax: a second result on tensors, an `amax_outs` buffer on
// memrefs.
// CHECK-LABEL: func.func @scaled_matmul_amax
// CHECK: %{{.*}}, %{{.*}} = fp8.scaled_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {a_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, b_granularity = #fp8.granularity<tensor>} : (tensor<?x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> (tensor<?x128xbf16>, tensor<f32>)
// CHECK: fp8.scaled_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} outs %{{.*}} amax_outs %{{.*}} {{{.*}}} : (memref<?x256xf8E4M3FN>, memref<128x256xf8E4M3FN>, memref<f32>, memref<f32>, memref<?x128xbf16>, memref<f32>) -> ()
func.func @scaled_matmul_amax(%a: tensor<?x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>, %s: tensor<f32>,
                              %ma: memref<?x256xf8E4M3FN>, %mb: memref<128x256xf8E4M3FN>, %ms: memref<f32>, %md: memref<?x128xbf16>, %mamax: memref<f32>) -> (tensor<?x128xbf16>, tensor<f32>) {
  %d, %amax = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> (tensor<?x128xbf16>, tensor<f32>)
  fp8.scaled_matmul %ma, %mb, %ms, %ms outs %md amax_outs %mamax {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (memref<?x256xf8E4M3FN>, memref<128x256xf8E4M3FN>, memref<f32>, memref<f32>, memref<?x128xbf16>, memref<f32>) -> ()
  return %d, %amax : tensor<?x128xbf16>, tensor<f32>
}

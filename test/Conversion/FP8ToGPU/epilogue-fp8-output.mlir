// RUN: fp8-opt %s -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul | FileCheck %s
// RUN: fp8-opt %s -fp8-attach-target=chip=sm_100a -fp8-lower-scaled-matmul | FileCheck %s --check-prefix=SM100
// RUN: rm -rf %t && mkdir -p %t/h100
// RUN: fp8-compile %s --chip=sm_90a -o %t/h100
// RUN: cat %t/h100/*_q1x128.ptx | FileCheck %s --check-prefix=PTX
// RUN: cat %t/h100/fp8_gemm_blockwise_e4m3_e4m3_e4m3_n2112_k2048_t128x128x128_s6_q1x128.json | FileCheck %s --check-prefix=JSON
// RUN: cat %t/h100/module.json | FileCheck %s --check-prefix=MODULE
// RUN: cat %t/h100/fp8_gemm_blockwise_e4m3_e4m3_e4m3_n2112_k2048_t128x128x128_s6_q1x128.json | FileCheck %s --check-prefix=TMAD
// RUN: cat %t/h100/fp8_gemm_tensorwise_e4m3_e4m3_e4m3_n4096_k2048_t128x192x128_s5_fast_amax_qtensor.json | FileCheck %s --check-prefix=TMAD64

// An FP8 D quantized in the sm_90a epilogue: 1x128 blocks along N (each
// row's block amax reduced over the quad of lanes that holds it, then the
// #fp8.blockwise rule) and a given per-tensor scale; per-tensor current
// scaling and rows in two phases (an f32 GEMM, with the amax reduced in its
// epilogue, then a quantization); every FP8 D on sm_100a in two phases.

// CHECK-LABEL: func.func @blockwise
// CHECK: fp8.launch @[[K:fp8_gemm_blockwise_e4m3_e4m3_e4m3_n2112_k2048_t128x128x128_s6_q1x128]]_launch_into(%arg0, %arg1, %arg2, %arg3, %{{.*}}, %{{.*}}) outputs [4, 5]
// CHECK-SAME: -> (tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>)
// SM100-LABEL: func.func @blockwise
// SM100: fp8.launch @fp8_gemm_blockwise_e4m3_e4m3_f32_n2112_k2048_{{.*}} -> tensor<?x2112xf32>
// SM100: fp8.quantize %{{.*}} {granularity = #fp8.granularity<tile 1x128>, recipe = #fp8.blockwise<>} : tensor<?x2112xf32> -> rowwise(tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>)
func.func @blockwise(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<2112x2048xf8E4M3FN>, %sa: tensor<?x16xf32>, %sb: tensor<17x16xf32>) -> (tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>) {
  %0, %1 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<>, result_recipe = #fp8.blockwise<>, result_granularity = #fp8.granularity<tile 1x128>} : (tensor<?x2048xf8E4M3FN>, tensor<2112x2048xf8E4M3FN>, tensor<?x16xf32>, tensor<17x16xf32>) -> (tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>)
  return %0, %1 : tensor<?x2112xf8E4M3FN>, tensor<?x17xf32>
}

// CHECK-LABEL: func.func @delayed
// CHECK: fp8.launch @fp8_gemm_tensorwise_e4m3_e4m3_e4m3_n4096_k2048_t128x256x128_s4_fast_amax_qtensor_launch_into(%arg0, %arg1, %arg2, %arg2, %arg3, %{{.*}}, %{{.*}}, %{{.*}}) outputs [5, 6, 7]
// SM100-LABEL: func.func @delayed
// SM100: %[[D:.*]]:2 = fp8.launch @fp8_gemm_tensorwise_e4m3_e4m3_f32_{{.*}}_amax_launch_into
// SM100: fp8.quantize %[[D]]#0 scale %arg3 {granularity = #fp8.granularity<tensor>, recipe = #fp8.delayed<>}
func.func @delayed(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<4096x2048xf8E4M3FN>, %s: tensor<f32>, %qs: tensor<f32>) -> (tensor<?x4096xf8E4M3FN>, tensor<f32>, tensor<f32>) {
  %0, %1, %2 = fp8.scaled_matmul %a, %b, %s, %s result_scale %qs {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.delayed<>, result_granularity = #fp8.granularity<tensor>} : (tensor<?x2048xf8E4M3FN>, tensor<4096x2048xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<?x4096xf8E4M3FN>, tensor<f32>, tensor<f32>)
  return %0, %1, %2 : tensor<?x4096xf8E4M3FN>, tensor<f32>, tensor<f32>
}

// CHECK-LABEL: func.func @current
// CHECK: %[[D:.*]]:2 = fp8.launch @fp8_gemm_tensorwise_e4m3_e4m3_f32_n4096_k2048_t128x256x128_s4_fast_amax_launch_into
// CHECK: %[[S:.*]], %{{.*}} = fp8.compute_scale %[[D]]#1 {element_type = f8E4M3FN, recipe = #fp8.current<>}
// CHECK: fp8.quantize %[[D]]#0 scale %[[S]] {granularity = #fp8.granularity<tensor>, recipe = #fp8.current<>} : tensor<?x4096xf32>, tensor<f32> -> rowwise(tensor<?x4096xf8E4M3FN>, tensor<f32>)
func.func @current(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<4096x2048xf8E4M3FN>, %s: tensor<f32>) -> (tensor<?x4096xf8E4M3FN>, tensor<f32>) {
  %0, %1 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.current<>, result_granularity = #fp8.granularity<tensor>} : (tensor<?x2048xf8E4M3FN>, tensor<4096x2048xf8E4M3FN>, tensor<f32>, tensor<f32>) -> (tensor<?x4096xf8E4M3FN>, tensor<f32>)
  return %0, %1 : tensor<?x4096xf8E4M3FN>, tensor<f32>
}

// CHECK-LABEL: func.func @row
// CHECK: %[[D:.*]] = fp8.launch @fp8_gemm_tensorwise_e4m3_e4m3_f32_n4096_k2048_t128x256x128_s4_fast_launch_into
// CHECK: fp8.quantize %[[D]] {granularity = #fp8.granularity<row>, recipe = #fp8.current<>} : tensor<?x4096xf32> -> rowwise(tensor<?x4096xf8E4M3FN>, tensor<?x1xf32>)
func.func @row(%a: tensor<?x2048xf8E4M3FN>, %b: tensor<4096x2048xf8E4M3FN>, %s: tensor<f32>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x1xf32>) {
  %0, %1 = fp8.scaled_matmul %a, %b, %s, %s {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.current<>, result_granularity = #fp8.granularity<row>} : (tensor<?x2048xf8E4M3FN>, tensor<4096x2048xf8E4M3FN>, tensor<f32>, tensor<f32>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x1xf32>)
  return %0, %1 : tensor<?x4096xf8E4M3FN>, tensor<?x1xf32>
}

// The 1x128 kernel: a thread's block maxima as a tree of NaN-propagating
// |u|, |v| maxima (max.NaN.xorsign.abs.f32), reduced over the quad of lanes
// by shuffles, the pairs cast with saturation, staged in shared memory (2
// bytes a pair) and stored with TMA, no 64-wide variant (a tile holds whole
// blocks).
// CHECK: gpu.func @[[K]]
// CHECK-COUNT-31: llvm.call_intrinsic "llvm.nvvm.fmax.nan.xorsign.abs.f"
// CHECK: nvvm.shfl.sync bfly
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: llvm.store %{{.*}}, %{{.*}} : i16, !llvm.ptr<3>
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK-NOT: gpu.func @fp8_gemm_blockwise_e4m3_e4m3_e4m3_n2112_k2048_t64x64x128
// PTX-COUNT-31: max.NaN.xorsign.abs.f32
// PTX: shfl.sync.bfly.b32
// PTX: cvt.rn.satfinite.e4m3x2.f32
// PTX: st.shared.b16
// PTX: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// The FP8 D's tensor map: boxes of 128 one-byte columns (one 1x128 block,
// the 128-byte swizzle span) by the tile's 128 rows.
// TMAD: "name": "tma_d",
// TMAD-NEXT: "passing": "grid_constant",
// TMAD: "name": "tma_b",
// TMAD: "box": [
// TMAD-NEXT: 128,
// TMAD-NEXT: 128
// TMAD-NEXT: ],
// TMAD-NEXT: "dims": [
// TMAD-NEXT: 2112,
// TMAD-NEXT: "M"
// TMAD-NEXT: ],
// TMAD-NEXT: "dtype": "e4m3",
// TMAD: "name": "tma_d",
// TMAD-NEXT: "oob_fill": "zero",
// TMAD-NEXT: "operand": "d",
// TMAD-NEXT: "rank": 2,
// TMAD-NEXT: "strides_bytes": [
// TMAD-NEXT: 2112
// TMAD-NEXT: ],
// TMAD-NEXT: "swizzle": "128B"
// A tile N of 192: three boxes of 64 one-byte columns, 64-byte swizzled.
// TMAD64: "name": "tma_d",
// TMAD64-NEXT: "passing": "grid_constant",
// TMAD64: "name": "tma_b",
// TMAD64: "box": [
// TMAD64-NEXT: 64,
// TMAD64-NEXT: 128
// TMAD64-NEXT: ],
// TMAD64: "name": "tma_d",
// TMAD64: "swizzle": "64B"
// JSON: "name": "d"
// JSON: "name": "result_scale_inv"
// JSON-NEXT: "role": "output"
// JSON-NEXT: "shape": [
// JSON-NEXT: 17,
// JSON-NEXT: "roundup(M, 4)"
// The program returns the scales MN-major, as the next GEMM reads them.
// MODULE: "name": "blockwise"
// MODULE: "name": "result1",
// MODULE-NEXT: "shape": [
// MODULE-NEXT: 17,
// MODULE-NEXT: "roundup(arg0_0, 4)"

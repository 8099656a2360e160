// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-quantize="strict=true" | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-to-ptx=chip=sm_90a | FileCheck %s --check-prefix=PTX
// RUN: fp8-opt %s -split-input-file -fp8-to-ptx=chip=sm_100a | FileCheck %s --check-prefix=PTX

// fp8.dequantize -> one kernel per shape, granularity and dtypes, reading
// the scale layouts the quantization kernels write.

// MXFP8: the UE8M0 byte of the 128x4 atom, decoded to 2^(e - 127); codes
// decoded pairwise by cvt.rn.f16x2.e4m3x2 (exact), an RN f32 product and an
// RNE conversion to bf16.
// CHECK-LABEL: func.func @mx
// CHECK-NOT: fp8.dequantize
// CHECK: %[[Y:.*]] = tensor.empty() : tensor<256x512xbf16>
// CHECK: fp8.launch @fp8_dequantize_mx1x32_e4m3_bf16_r256_c512_launch_into(%arg0, %arg1, %[[Y]]) outputs [2] : (tensor<256x512xf8E4M3FN>, tensor<256x16xf8E8M0FNU>, tensor<256x512xbf16>) -> tensor<256x512xbf16>
// CHECK: gpu.func @fp8_dequantize_mx1x32_e4m3_bf16_r256_c512
// CHECK-SAME: dequantize = {cols = 512 : i64, dtype = "e4m3", granularity = "mx1x32", out_dtype = "bf16", rows = 256 : i64, scale_layout = "mx_atom_128x4_ue8m0"}
// CHECK-SAME: grid = {kind = "tiles", operand = "y", tile_m = 128 : i64, tile_n = 128 : i64}, kind = "dequantize"
// CHECK-SAME: {alignment = 8 : i64, dtype = "e4m3", name = "x", role = "input", shape = [256, 512]}
// CHECK-SAME: {alignment = 1 : i64, dtype = "ue8m0", name = "scale_inv", role = "input", shape = [2, 4, 512]}
// CHECK-SAME: {alignment = 16 : i64, dtype = "bf16", name = "y", role = "output", shape = [256, 512]}
// CHECK: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i8
// CHECK: arith.shli %{{.*}}, %c23_i32
// CHECK-COUNT-4: nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK-COUNT-8: arith.mulf
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>
// PTX-LABEL: func.func @mx
// PTX: gpu.binary @fp8_kernels
// PTX-SAME: cvt.rn.f16x2.e4m3x2
// PTX-SAME: mul.rn.f32
// PTX-SAME: cvt.rn.bf16x2.f32
// PTX-NOT: ftz
func.func @mx(%q: tensor<256x512xf8E4M3FN>, %s: tensor<256x16xf8E8M0FNU>) -> tensor<256x512xbf16> {
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<mx 1x32>}
      : tensor<256x512xf8E4M3FN>, tensor<256x16xf8E8M0FNU> -> tensor<256x512xbf16>
  return %y : tensor<256x512xbf16>
}

// -----

// 1x128 scales MN-major [ceil(C/128), roundup(R, 4)] (the quantize kernels'
// layout), E5M2 codes, f32 output: two 16-byte stores per row.
// CHECK-LABEL: func.func @blockwise_1x128
// CHECK: gpu.func @fp8_dequantize_1x128_e5m2_f32_r130_c256
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "scale_inv", role = "input", shape = [2, 132]}
// CHECK: arith.constant 132 : i32
// CHECK: nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E5M2) -> vector<2xf16>
// CHECK-NOT: arith.truncf
// CHECK-COUNT-2: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>
// PTX-LABEL: func.func @blockwise_1x128
// PTX: cvt.rn.f16x2.e5m2x2
func.func @blockwise_1x128(%q: tensor<130x256xf8E5M2>, %s: tensor<130x2xf32>) -> tensor<130x256xf32> {
  %y = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 1x128>}
      : tensor<130x256xf8E5M2>, tensor<130x2xf32> -> tensor<130x256xf32>
  return %y : tensor<130x256xf32>
}

// -----

// 128x128 scales [ceil(R/128), ceil(C/128)], per-tensor and per-row scales,
// f16 output; tail tiles are guarded.
// CHECK-LABEL: func.func @others
// CHECK: fp8.launch @fp8_dequantize_128x128_e4m3_f16_r200_c136_launch_into
// CHECK: fp8.launch @fp8_dequantize_tensor_e4m3_f16_r200_c136_launch_into
// CHECK: fp8.launch @fp8_dequantize_row_e4m3_f16_r200_c136_launch_into
// CHECK: gpu.func @fp8_dequantize_128x128_e4m3_f16_r200_c136
// CHECK-SAME: name = "scale_inv", role = "input", shape = [2, 2]
// CHECK: scf.if
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// CHECK: gpu.func @fp8_dequantize_tensor_e4m3_f16_r200_c136
// CHECK-SAME: name = "scale_inv", role = "input", shape = []
// CHECK: gpu.func @fp8_dequantize_row_e4m3_f16_r200_c136
// CHECK-SAME: name = "scale_inv", role = "input", shape = [200, 1]
func.func @others(%q: tensor<200x136xf8E4M3FN>, %s: tensor<2x2xf32>, %t: tensor<f32>, %r: tensor<200x1xf32>)
    -> (tensor<200x136xf16>, tensor<200x136xf16>, tensor<200x136xf16>) {
  %a = fp8.dequantize %q, %s {granularity = #fp8.granularity<tile 128x128>}
      : tensor<200x136xf8E4M3FN>, tensor<2x2xf32> -> tensor<200x136xf16>
  %b = fp8.dequantize %q, %t {granularity = #fp8.granularity<tensor>}
      : tensor<200x136xf8E4M3FN>, tensor<f32> -> tensor<200x136xf16>
  %c = fp8.dequantize %q, %r {granularity = #fp8.granularity<row>}
      : tensor<200x136xf8E4M3FN>, tensor<200x1xf32> -> tensor<200x136xf16>
  return %a, %b, %c : tensor<200x136xf16>, tensor<200x136xf16>, tensor<200x136xf16>
}

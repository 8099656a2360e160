// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-quantize="strict=true" | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-to-ptx=chip=sm_90a | FileCheck %s --check-prefix=PTX
// RUN: fp8-opt %s -split-input-file -fp8-to-ptx=chip=sm_100a | FileCheck %s --check-prefix=PTX

// A tensor arith.truncf from f32 to bf16/f16 (the rounding of f32 partial
// sums reduced across devices) -> one conversion kernel per shape and
// dtypes, in the quantization kernels' tiles: 8 values per thread, two
// 16-byte f32 loads, one RNE conversion, one 16-byte store.
// CHECK-LABEL: func.func @bf16
// CHECK-NOT: arith.truncf
// CHECK: %[[Y:.*]] = tensor.empty() : tensor<256x512xbf16>
// CHECK: fp8.launch @fp8_convert_f32_bf16_r256_c512_launch_into(%arg0, %[[Y]]) outputs [1] : (tensor<256x512xf32>, tensor<256x512xbf16>) -> tensor<256x512xbf16>
// CHECK: gpu.func @fp8_convert_f32_bf16_r256_c512
// CHECK-SAME: convert = {cols = 512 : i64, input_dtype = "f32", out_dtype = "bf16", rounding = "to nearest even, subnormals kept", rows = 256 : i64}
// CHECK-SAME: grid = {kind = "tiles", operand = "y", tile_m = 128 : i64, tile_n = 128 : i64}, kind = "convert"
// CHECK-SAME: {alignment = 16 : i64, dtype = "f32", name = "x", role = "input", shape = [256, 512]}
// CHECK-SAME: {alignment = 16 : i64, dtype = "bf16", name = "y", role = "output", shape = [256, 512]}
// CHECK-NOT: scf.if
// CHECK-COUNT-2: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// PTX-LABEL: func.func @bf16
// PTX: gpu.binary @fp8_kernels
// PTX-SAME: cvt.rn.bf16x2.f32
// PTX-NOT: ftz
func.func @bf16(%x: tensor<256x512xf32>) -> tensor<256x512xbf16> {
  %y = arith.truncf %x : tensor<256x512xf32> to tensor<256x512xbf16>
  return %y : tensor<256x512xbf16>
}

// -----

// A run-time R (the trailing i32 `r`) and a partial tile: every row and
// column guarded; f16 output.
// CHECK-LABEL: func.func @f16_dynamic
// CHECK: %[[R:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[Y:.*]] = tensor.empty(%[[R]]) : tensor<?x136xf16>
// CHECK: fp8.launch @fp8_convert_f32_f16_rdyn_c136_launch_into(%arg0, %[[Y]])
// CHECK: gpu.func @fp8_convert_f32_f16_rdyn_c136
// CHECK-SAME: convert = {cols = 136 : i64, input_dtype = "f32", out_dtype = "f16", rounding = "to nearest even, subnormals kept", rows = "R"}
// CHECK-SAME: params = [{kind = "pointer", name = "x", operand = "x"}, {kind = "pointer", name = "y", operand = "y"}, {kind = "i32", name = "r", value = "R"}]
// CHECK: scf.if
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// PTX-LABEL: func.func @f16_dynamic
// PTX: cvt.rn.f16x2.f32
func.func @f16_dynamic(%x: tensor<?x136xf32>) -> tensor<?x136xf16> {
  %y = arith.truncf %x : tensor<?x136xf32> to tensor<?x136xf16>
  return %y : tensor<?x136xf16>
}

// -----

// Conversions of other types, and of values that are not tensors, are not
// this pass's.
// CHECK-LABEL: func.func @others
// CHECK: arith.truncf %arg0 : tensor<4x8xf64> to tensor<4x8xf32>
// CHECK: arith.truncf %arg1 : f32 to bf16
// CHECK-NOT: fp8.launch
func.func @others(%x: tensor<4x8xf64>, %s: f32) -> (tensor<4x8xf32>, bf16) {
  %y = arith.truncf %x : tensor<4x8xf64> to tensor<4x8xf32>
  %t = arith.truncf %s : f32 to bf16
  return %y, %t : tensor<4x8xf32>, bf16
}

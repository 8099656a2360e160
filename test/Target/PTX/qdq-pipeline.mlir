// RUN: fp8-opt %s --fp8-to-ptx=chip=sm_90a | FileCheck %s --check-prefixes=CHECK,BOTH
// RUN: fp8-opt %s --fp8-to-ptx=chip=sm_100a | FileCheck %s --check-prefix=BOTH

// A Q/DQ graph (as exported for TensorRT) compiles to one FP8 GEMM kernel:
// fp8-fuse-scales makes it a scaled_matmul, whose B read as [K, N] is
// MN-major; fp8-select-layouts flips the weight's quantize to a transposed
// columnwise output for sm_90a's K-major wgmma, which fp8-lower-quantize
// turns into a cast + transpose kernel.
// CHECK-LABEL: func.func @qdq_linear
// CHECK: call @fp8_quantize_tensor_tensor_bf16_e4m3_r256_c64_col_launch_into({{.*}}) : (memref<256x64xbf16>, memref<f32>, memref<64x256xf8E4M3FN>, memref<f32>) -> ()
// CHECK-NOT: linalg.matmul
// CHECK: call @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n64_k256_{{.*}}_launch
func.func @qdq_linear(%x: tensor<128x256xbf16>, %w: tensor<256x64xbf16>, %xs: tensor<f32>, %ws: tensor<f32>) -> tensor<128x64xbf16> {
  %xq, %xsi = fp8.quantize %x scale %xs {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<128x256xbf16>, tensor<f32> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<f32>)
  %wq, %wsi = fp8.quantize %w scale %ws {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>} : tensor<256x64xbf16>, tensor<f32> -> rowwise(tensor<256x64xf8E4M3FN>, tensor<f32>)
  %dx = fp8.dequantize %xq, %xsi {granularity = #fp8.granularity<tensor>} : tensor<128x256xf8E4M3FN>, tensor<f32> -> tensor<128x256xbf16>
  %dw = fp8.dequantize %wq, %wsi {granularity = #fp8.granularity<tensor>} : tensor<256x64xf8E4M3FN>, tensor<f32> -> tensor<256x64xbf16>
  %zero = arith.constant 0.0 : bf16
  %empty = tensor.empty() : tensor<128x64xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%empty : tensor<128x64xbf16>) -> tensor<128x64xbf16>
  %y = linalg.matmul ins(%dx, %dw : tensor<128x256xbf16>, tensor<256x64xbf16>) outs(%init : tensor<128x64xbf16>) -> tensor<128x64xbf16>
  return %y : tensor<128x64xbf16>
}

#map_a = affine_map<(m, n, k) -> (m, k)>
#map_bt = affine_map<(m, n, k) -> (n, k)>
#map_c = affine_map<(m, n, k) -> (m, n)>

// Q/DQ linear layer with an f32 bias and a bf16 cast: one rowwise GEMM
// kernel with a bias epilogue on either chip.
// BOTH-LABEL: func.func @qdq_bias_cast
// BOTH-NOT: linalg
// BOTH-NOT: arith.truncf
// BOTH: call @fp8_gemm_rowwise_e4m3_e4m3_bf16_n64_k256_{{.*}}_bias_launch
// BOTH-NOT: arith.addf
// BOTH: gpu.binary @fp8_kernels
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k32.f32.e4m3.e4m3
func.func @qdq_bias_cast(%a: tensor<?x256xf8E4M3FN>, %sa: tensor<?x1xf32>, %b: tensor<64x256xf8E4M3FN>, %sb: tensor<64x1xf32>, %bias: tensor<64xf32>) -> tensor<?x64xbf16> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x256xf8E4M3FN>
  %da = fp8.dequantize %a, %sa {granularity = #fp8.granularity<row>} : tensor<?x256xf8E4M3FN>, tensor<?x1xf32> -> tensor<?x256xf32>
  %db = fp8.dequantize %b, %sb {granularity = #fp8.granularity<row>} : tensor<64x256xf8E4M3FN>, tensor<64x1xf32> -> tensor<64x256xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%m) : tensor<?x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mm = linalg.matmul indexing_maps = [#map_a, #map_bt, #map_c] ins(%da, %db : tensor<?x256xf32>, tensor<64x256xf32>) outs(%init : tensor<?x64xf32>) -> tensor<?x64xf32>
  %bempty = tensor.empty(%m) : tensor<?x64xf32>
  %bb = linalg.broadcast ins(%bias : tensor<64xf32>) outs(%bempty : tensor<?x64xf32>) dimensions = [0]
  %y = arith.addf %mm, %bb : tensor<?x64xf32>
  %yb = arith.truncf %y : tensor<?x64xf32> to tensor<?x64xbf16>
  return %yb : tensor<?x64xbf16>
}

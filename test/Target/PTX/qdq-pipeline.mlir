// RUN: fp8-opt %s --fp8-to-ptx=chip=sm_90a | FileCheck %s

// A Q/DQ graph (as exported for TensorRT) compiles to one FP8 GEMM kernel:
// fp8-fuse-scales makes it a scaled_matmul, whose B read as [K, N] is
// MN-major; fp8-select-layouts flips the weight's quantize to a transposed
// columnwise output for sm_90a's K-major wgmma.
// CHECK-LABEL: func.func @qdq_linear
// CHECK: fp8.quantize {{.*}} -> columnwise(tensor<64x256xf8E4M3FN>, tensor<f32>)
// CHECK-NOT: linalg.matmul
// CHECK: call @fp8_gemm_tensorwise_e4m3_e4m3_bf16_n64_k256_{{.*}}_launch
// CHECK: gpu.binary @fp8_kernels
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k32.f32.e4m3.e4m3
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

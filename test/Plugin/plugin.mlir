// Stock Debian mlir-opt, not fp8-opt, with FP8Plugin.so: parses fp8 IR
// mixed with upstream dialects, runs fp8 passes and the whole fp8-to-ptx
// pipeline.
// UNSUPPORTED: sanitizers
// RUN: %mlir_opt --load-dialect-plugin=%fp8_plugin --load-pass-plugin=%fp8_plugin %s \
// RUN:   | FileCheck %s --check-prefix=PARSE
// RUN: %mlir_opt --load-dialect-plugin=%fp8_plugin --load-pass-plugin=%fp8_plugin %s \
// RUN:   --pass-pipeline='builtin.module(fp8-fuse-scales,fp8-set-gemm-defaults{config=#fp8.gemm_config<tile=128x64x128,stages=3>})' \
// RUN:   | FileCheck %s --check-prefix=PASSES
// RUN: %mlir_opt --load-dialect-plugin=%fp8_plugin --load-pass-plugin=%fp8_plugin %s \
// RUN:   --pass-pipeline='builtin.module(fp8-to-ptx{chip=sm_90a})' \
// RUN:   | FileCheck %s --check-prefix=PTX
// Without the plugin, mlir-opt does not know the dialect.
// RUN: not %mlir_opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN
// An unknown chip is a diagnostic, not a crash.
// RUN: not %mlir_opt --load-dialect-plugin=%fp8_plugin --load-pass-plugin=%fp8_plugin %s \
// RUN:   --pass-pipeline='builtin.module(fp8-to-ptx{chip=sm_42})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADCHIP

// PARSE-LABEL: func.func @linear
// PARSE: fp8.dequantize %{{.*}} {granularity = #fp8.granularity<row>}
// PARSE: linalg.matmul

// PASSES-LABEL: func.func @linear
// PASSES-NOT: linalg.matmul
// PASSES: fp8.scaled_matmul
// PASSES-SAME: config = #fp8.gemm_config<tile = 128x64x128, stages = 3>

// PTX-LABEL: func.func @linear
// PTX: call @fp8_gemm_rowwise_e4m3_e4m3_bf16_n64_k256_{{.*}}_launch
// PTX: gpu.binary @fp8_kernels
// PTX-SAME: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k32.f32.e4m3.e4m3

// NOPLUGIN: error: Dialect `fp8' not found for custom op 'fp8.dequantize'

// BADCHIP: error: unknown chip 'sm_42': expected one of sm_90a, sm_100a

#map_a = affine_map<(m, n, k) -> (m, k)>
#map_bt = affine_map<(m, n, k) -> (n, k)>
#map_c = affine_map<(m, n, k) -> (m, n)>
func.func @linear(%a: tensor<?x256xf8E4M3FN>, %sa: tensor<?x1xf32>,
                  %b: tensor<64x256xf8E4M3FN>, %sb: tensor<64x1xf32>) -> tensor<?x64xbf16> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x256xf8E4M3FN>
  %da = fp8.dequantize %a, %sa {granularity = #fp8.granularity<row>} : tensor<?x256xf8E4M3FN>, tensor<?x1xf32> -> tensor<?x256xf32>
  %db = fp8.dequantize %b, %sb {granularity = #fp8.granularity<row>} : tensor<64x256xf8E4M3FN>, tensor<64x1xf32> -> tensor<64x256xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%m) : tensor<?x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mm = linalg.matmul indexing_maps = [#map_a, #map_bt, #map_c] ins(%da, %db : tensor<?x256xf32>, tensor<64x256xf32>) outs(%init : tensor<?x64xf32>) -> tensor<?x64xf32>
  %yb = arith.truncf %mm : tensor<?x64xf32> to tensor<?x64xbf16>
  return %yb : tensor<?x64xbf16>
}

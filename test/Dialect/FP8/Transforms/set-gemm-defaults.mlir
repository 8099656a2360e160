// RUN: fp8-opt %s --fp8-set-gemm-defaults='recipe=#fp8.current<format=e4m3> config=#fp8.gemm_config<tile=128x64x128,stages=3>' \
// RUN:   | FileCheck %s
// RUN: fp8-opt %s --fp8-set-gemm-defaults | FileCheck %s --check-prefix=NONE
// RUN: not fp8-opt %s --fp8-set-gemm-defaults='config=#fp8.blockwise<>' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOTCONFIG
// RUN: not fp8-opt %s --fp8-set-gemm-defaults='recipe=#fp8.nonsense<>' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADRECIPE
// The pipeline option form.
// RUN: fp8-opt %s --fp8-to-ptx='chip=sm_90a gemm-config=#fp8.gemm_config<tile=128x64x128,stages=3>' \
// RUN:   | FileCheck %s --check-prefix=PIPELINE

// CHECK-LABEL: func.func @without_config
// CHECK: fp8.scaled_matmul
// CHECK-SAME: config = #fp8.gemm_config<tile = 128x64x128, stages = 3>
// CHECK-SAME: recipe = #fp8.current<format = e4m3>
// NONE-LABEL: func.func @without_config
// NONE-NOT: config =
// NONE-NOT: recipe =
// NONE: return
// PIPELINE: call @fp8_gemm_tensorwise_{{.*}}_t128x64x128_s3_fast_launch
func.func @without_config(%a: tensor<?x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>,
                          %sa: tensor<f32>, %sb: tensor<f32>) -> tensor<?x128xbf16> {
  %d = fp8.scaled_matmul %a, %b, %sa, %sb {
      a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>,
      accumulation = #fp8.accumulation<fast>}
      : (tensor<?x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<f32>, tensor<f32>)
      -> tensor<?x128xbf16>
  return %d : tensor<?x128xbf16>
}

// An attribute on the op wins over the option.
// CHECK-LABEL: func.func @with_config
// CHECK: config = #fp8.gemm_config<tile = 128x128x128>
// PIPELINE: call @fp8_gemm_tensorwise_{{.*}}_t128x128x128_s4_fast_launch
func.func @with_config(%a: tensor<?x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>,
                       %sa: tensor<f32>, %sb: tensor<f32>) -> tensor<?x128xbf16> {
  %d = fp8.scaled_matmul %a, %b, %sa, %sb {
      a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>,
      accumulation = #fp8.accumulation<fast>, config = #fp8.gemm_config<tile = 128x128x128>}
      : (tensor<?x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<f32>, tensor<f32>)
      -> tensor<?x128xbf16>
  return %d : tensor<?x128xbf16>
}

// NOTCONFIG: error: fp8-set-gemm-defaults: option config='#fp8.blockwise<>' is not a #fp8.gemm_config attribute
// BADRECIPE: error: fp8-set-gemm-defaults: option recipe='#fp8.nonsense<>' is not an fp8 recipe attribute

// RUN: fp8-opt %s -split-input-file -fp8-blockwise-to-mx | FileCheck %s

// DeepSeek 1x128 x 128x128 with power-of-two f32 scales becomes an MXFP8
// GEMM on the same FP8 data: A's scale (m, kb) repeats over the four 1x32
// blocks of its 128-K group, B's over its 128 rows too; the UE8M0 code is
// the f32 exponent field.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 4)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1) -> (d0 floordiv 128, d1 floordiv 4)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @deepseek
// CHECK-SAME: (%[[XA:.*]]: tensor<?x7168xf8E4M3FN>, %[[XB:.*]]: tensor<2112x7168xf8E4M3FN>, %[[SA:.*]]: tensor<?x56xf32>, %[[SB:.*]]: tensor<17x56xf32>)
// CHECK:     %[[M:.*]] = tensor.dim %[[XA]], %c0
// CHECK:     %[[EA:.*]] = tensor.empty(%[[M]]) : tensor<?x224xf8E8M0FNU>
// CHECK:     %[[MA:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[SA]] : tensor<?x56xf32>) outs(%[[EA]] : tensor<?x224xf8E8M0FNU>)
// CHECK:       %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:       %[[EXP:.*]] = arith.shrui %[[BITS]], %c23_i32 : i32
// CHECK:       %[[BYTE:.*]] = arith.trunci %[[EXP]] : i32 to i8
// CHECK:       %[[CODE:.*]] = arith.bitcast %[[BYTE]] : i8 to f8E8M0FNU
// CHECK:       linalg.yield %[[CODE]]
// CHECK:     %[[MB:.*]] = linalg.generic {indexing_maps = [#[[B]], #[[ID]]], {{.*}} ins(%[[SB]] : tensor<17x56xf32>) outs(%{{.*}} : tensor<2112x224xf8E8M0FNU>)
// CHECK:     fp8.scaled_matmul %[[XA]], %[[XB]], %[[MA]], %[[MB]] {a_granularity = #fp8.granularity<mx 1x32>, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = #fp8.granularity<mx 1x32>}
func.func @deepseek(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<17x56xf32>) -> tensor<?x2112xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<17x56xf32>) -> tensor<?x2112xbf16>
  return %0 : tensor<?x2112xbf16>
}

// -----

// UE8M0 scales are copied, not converted; a K tail (K = 160: two 128-K
// groups, five 1x32 blocks) maps block 4 to group 1; MN-major operands take
// their M/N extent from dimension 1.
// CHECK-LABEL: func.func @e8m0_tail_mn
// CHECK:     linalg.generic {{.*}} ins(%{{.*}} : tensor<64x2xf8E8M0FNU>) outs(%{{.*}} : tensor<64x5xf8E8M0FNU>)
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: f8E8M0FNU, %{{.*}}: f8E8M0FNU):
// CHECK-NEXT:    linalg.yield %[[IN]]
// CHECK:     linalg.generic {{.*}} outs(%{{.*}} : tensor<32x5xf8E8M0FNU>)
// CHECK:     fp8.scaled_matmul {{.*}} {a_granularity = #fp8.granularity<mx 1x32>, a_major = #fp8.major<mn>, accumulation = #fp8.accumulation<promoted(32)>, b_granularity = #fp8.granularity<mx 1x32>, b_major = #fp8.major<mn>}
func.func @e8m0_tail_mn(%a: tensor<160x64xf8E4M3FN>, %b: tensor<160x32xf8E4M3FN>, %sa: tensor<64x2xf8E8M0FNU>, %sb: tensor<32x2xf8E8M0FNU>) -> tensor<64x32xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, a_major = #fp8.major<mn>, b_major = #fp8.major<mn>, accumulation = #fp8.accumulation<promoted(32)>} : (tensor<160x64xf8E4M3FN>, tensor<160x32xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<32x2xf8E8M0FNU>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

// Not rewritten: f32 scales that may not be powers of two (scales = f32, or
// no recipe to say), and per-tensor scales.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: linalg.generic
// CHECK-COUNT-3: granularity = #fp8.granularity<{{tile|tensor}}
// CHECK-NOT: mx 1x32
func.func @left_alone(%a: tensor<?x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>, %sa: tensor<?x2xf32>, %sb: tensor<1x2xf32>, %t: tensor<f32>) -> (tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>) {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, recipe = #fp8.blockwise<scales = f32>} : (tensor<?x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<?x128xbf16>
  %1 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<?x128xbf16>
  %2 = fp8.scaled_matmul %a, %b, %t, %t {a_granularity = #fp8.granularity<tensor>, b_granularity = #fp8.granularity<tensor>, accumulation = #fp8.accumulation<fast>} : (tensor<?x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x128xbf16>
  return %0, %1, %2 : tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>
}

// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul | FileCheck %s

// The host side of a GEMM adding into C (the wgrad GEMM's main-grad form).
// Where its kernel, and each launch variant, may be given C's memory as D
// (`in_place_of` in their metadata: the staged 1D x 1D epilogue's TMA
// reduce-add) and nothing reads C after the GEMM, D's destination is C
// itself, and the launcher's D argument says which input it may update
// (`fp8.in_place_of`): one-shot bufferization then writes D into C's buffer.
// CHECK-LABEL: func.func private @{{fp8_gemm_blockwise_1d1d_e4m3_e4m3_f32_n2112_k7168_t128x128x128_s5_acc}}_launch_into(
// CHECK-SAME: memref<?x2112xf32> {bufferization.access = "read"}, memref<?x2112xf32> {bufferization.access = "write", fp8.in_place_of = 4 : i64})
// CHECK-LABEL: func.func @in_place(
// CHECK-SAME: %[[A:[^:]*]]: tensor<?x7168xf8E4M3FN>, %[[B:[^:]*]]: tensor<2112x7168xf8E4M3FN>, %[[SA:[^:]*]]: tensor<?x56xf32>, %[[SB:[^:]*]]: tensor<2112x56xf32>, %[[C:[^:]*]]: tensor<?x2112xf32>)
// CHECK-NOT: tensor.empty
// CHECK: %[[D:.*]] = fp8.launch @{{.*}}_launch_into(%[[A]], %[[B]], %[[SA]], %[[SB]], %[[C]], %[[C]]) outputs [5]
// CHECK-NEXT: return %[[D]]
func.func @in_place(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<2112x56xf32>, %c: tensor<?x2112xf32>) -> tensor<?x2112xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<2112x56xf32>, tensor<?x2112xf32>) -> tensor<?x2112xf32>
  return %0 : tensor<?x2112xf32>
}

// -----

// C is still read after the GEMM (returned as it was): D is a new tensor.
// CHECK-LABEL: func.func @c_read_after(
// CHECK-SAME: %[[C:[^:]*]]: tensor<?x2112xf32>)
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x2112xf32>
// CHECK: %[[D:.*]] = fp8.launch @{{.*}}_launch_into(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C]], %[[E]]) outputs [5]
// CHECK-NEXT: return %[[D]], %[[C]]
func.func @c_read_after(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<2112x56xf32>, %c: tensor<?x2112xf32>) -> (tensor<?x2112xf32>, tensor<?x2112xf32>) {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<2112x56xf32>, tensor<?x2112xf32>) -> tensor<?x2112xf32>
  return %0, %c : tensor<?x2112xf32>, tensor<?x2112xf32>
}

// -----

// A kernel that adds C in registers and stores D directly (128x160: no room
// to stage the f32 tile) may not be given C's memory as D: a new tensor.
// CHECK-LABEL: func.func private @{{fp8_gemm_blockwise_1d1d_e4m3_e4m3_f32_n2112_k7168_t128x160x128_s6_acc}}_launch_into(
// CHECK-NOT: fp8.in_place_of
// CHECK-LABEL: func.func @direct_stores(
// CHECK-SAME: %[[C:[^:]*]]: tensor<?x2112xf32>)
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x2112xf32>
// CHECK: fp8.launch @{{.*}}_launch_into(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C]], %[[E]]) outputs [5]
func.func @direct_stores(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<2112x56xf32>, %c: tensor<?x2112xf32>) -> tensor<?x2112xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x160x128, stages = 6>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<2112x56xf32>, tensor<?x2112xf32>) -> tensor<?x2112xf32>
  return %0 : tensor<?x2112xf32>
}

// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul | FileCheck %s

// The 1D x 1D GEMM accumulating into C (the wgrad GEMM's main-grad form)
// stages its f32 tile in shared memory (two 32-column boxes of 128 bytes in
// turn, 5 stages) and stores it with TMA. The output d may be C's memory
// (`in_place_of`): the kernel takes D's address besides its tensor map and,
// where the caller passes C as D, adds each staged box into D with a TMA
// reduce-add and reads no C; otherwise it adds C (loads at indices clamped
// into D) before staging and TMA-stores D.
// CHECK-LABEL: gpu.func @fp8_gemm_blockwise_1d1d_e4m3_e4m3_f32_n2112_k7168_t128x128x128_s5_acc(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %[[TMAD:[^:]*]]: !llvm.ptr, %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %[[C:[^:]*]]: !llvm.ptr<1>, %[[D:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: i32) kernel
// CHECK-SAME: fp8.grid_constant_args = array<i32: 0, 1, 2>
// CHECK-SAME: {dtype = "f32", name = "c", role = "input", shape = ["M", 2112]}, {dtype = "f32", in_place_of = "c", name = "d", role = "output", shape = ["M", 2112]}
// CHECK-SAME: {kind = "pointer", name = "c", operand = "c"}, {kind = "pointer", name = "d", operand = "d"}, {kind = "i32", name = "m", value = "M"}
// CHECK-SAME: {box = [32, 128], dims = [2112, "M"], dtype = "f32", {{.*}} name = "tma_d", oob_fill = "zero", operand = "d", rank = 2 : i64, strides_bytes = [8448], swizzle = "128B"}
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: %[[INPLACE:.*]] = llvm.icmp "eq" %[[C]], %[[D]] : !llvm.ptr<1>
// CHECK-NEXT: scf.if %[[INPLACE]] {
// CHECK-NOT: !llvm.ptr<1> ->
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.tensor.reduce %[[TMAD]], %{{.*}}, box[%{{.*}}, %{{.*}}] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, <3>
// CHECK-NOT: !llvm.ptr<1> ->
// CHECK: nvvm.cp.async.bulk.tensor.reduce %[[TMAD]]
// CHECK-NOT: !llvm.ptr<1> ->
// CHECK: nvvm.cp.async.bulk.tensor.reduce %[[TMAD]]
// CHECK-NOT: !llvm.ptr<1> ->
// CHECK: nvvm.cp.async.bulk.tensor.reduce %[[TMAD]]
// CHECK-NOT: !llvm.ptr<1> ->
// CHECK-NOT: nvvm.cp.async.bulk.tensor.reduce
// CHECK: %[[DISTINCT:.*]] = llvm.icmp "ne" %[[C]], %[[D]] : !llvm.ptr<1>
// CHECK-NEXT: scf.if %[[DISTINCT]] {
// CHECK-NOT: nvvm.cp.async.bulk.tensor.reduce
// CHECK: arith.minui
// CHECK: %[[CV:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> vector<2xf32>
// CHECK: %[[C0:.*]] = llvm.extractelement %[[CV]]
// CHECK: arith.addf %{{.*}}, %[[C0]] : f32
// CHECK: llvm.store %{{.*}} : vector<2xf32>, !llvm.ptr<3>
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[TMAD]]
// CHECK-NOT: nvvm.cp.async.bulk.tensor.reduce
// CHECK-NOT: llvm.store %{{.*}}, !llvm.ptr<1>
// CHECK: gpu.return
func.func @wgrad_main_grad(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<2112x56xf32>, %c: tensor<?x2112xf32>) -> tensor<?x2112xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<2112x56xf32>, tensor<?x2112xf32>) -> tensor<?x2112xf32>
  return %0 : tensor<?x2112xf32>
}

// -----

// A configured tile whose f32 staging does not fit beside its stages (128x160:
// five boxes, no pair, 6 stages) keeps the direct stores: C loaded and D
// stored by each thread under its edge guards, d not updatable in place.
// CHECK-LABEL: gpu.func @fp8_gemm_blockwise_1d1d_e4m3_e4m3_f32_n2112_k7168_t128x160x128_s6_acc(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: i32) kernel
// CHECK-SAME: fp8.grid_constant_args = array<i32: 0, 1>
// CHECK-SAME: {dtype = "f32", name = "d", role = "output", shape = ["M", 2112]}
// CHECK-NOT: in_place_of
// CHECK-NOT: nvvm.cp.async.bulk.tensor.reduce
// CHECK: scf.if
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> vector<2xf32>
// CHECK: llvm.store %{{.*}} : vector<2xf32>, !llvm.ptr<1>
// CHECK-NOT: nvvm.cp.async.bulk.tensor.reduce
// CHECK: gpu.return
func.func @wgrad_main_grad_t160(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<2112x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<2112x56xf32>, %c: tensor<?x2112xf32>) -> tensor<?x2112xf32> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb accumulate_into %c {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 1x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x160x128, stages = 6>} : (tensor<?x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<2112x56xf32>, tensor<?x2112xf32>) -> tensor<?x2112xf32>
  return %0 : tensor<?x2112xf32>
}

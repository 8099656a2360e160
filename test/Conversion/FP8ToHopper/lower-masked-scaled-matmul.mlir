// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-scaled-matmul | FileCheck %s

// Rowwise, m_masked, 3 groups of M rows ([3, M, 512] x [3, 256, 512]): the
// launch writes D [3, M, 256] (M from A's second extent).
// CHECK-LABEL: module attributes
// CHECK: func.func private @[[K:fp8_grouped_masked_gemm_rowwise_e4m3_e4m3_bf16_n256_k512_t128x128x128_s[0-9]+_g3_fast]]_launch_into(memref<3x?x512xf8E4M3FN> {bufferization.access = "read"}, memref<3x256x512xf8E4M3FN> {bufferization.access = "read"}, memref<3x?x1xf32> {bufferization.access = "read"}, memref<3x256x1xf32> {bufferization.access = "read"}, memref<3xi32> {bufferization.access = "read"}, memref<3x?x256xbf16> {bufferization.access = "write"})
// CHECK: func.func @rowwise
// CHECK: %[[M:.*]] = tensor.dim %arg0, %c1 : tensor<3x?x512xf8E4M3FN>
// CHECK: %[[D:.*]] = tensor.empty(%[[M]]) : tensor<3x?x256xbf16>
// CHECK: fp8.launch @[[K]]_launch_into(%arg0, %arg1, %arg2, %arg3, %arg4, %[[D]]) outputs [5]
// D is a pointer (no tma_d: its staged tile is stored by the consumers,
// guarded by the group's count); the counts are a pointer before m.
// Metadata: A [3, M, 512] through a 3-D tensor map, the counts masked_m
// [3], D [3, M, 256] aligned to its 16-byte stores, the per-row A scales
// [3, M].
// CHECK: gpu.func @[[K]](%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[DP:.*]]: !llvm.ptr<1>, %[[AS:.*]]: !llvm.ptr<1>, %[[BS:.*]]: !llvm.ptr<1>, %[[MM:.*]]: !llvm.ptr<1>, %[[MP:.*]]: i32) kernel
// CHECK-SAME: group_layout = "m_masked", groups = 3 : i64
// CHECK-SAME: {dtype = "e4m3", name = "a", role = "input", shape = [3, "M", 512]}
// CHECK-SAME: {dtype = "f32", name = "a_scale_inv", role = "input", shape = [3, "M"]}
// CHECK-SAME: {dtype = "i32", name = "masked_m", role = "input", shape = [3]}
// CHECK-SAME: {alignment = 16 : i64, dtype = "bf16", name = "d", role = "output", shape = [3, "M", 256]}
// CHECK-SAME: {kind = "pointer", name = "masked_m", operand = "masked_m"}, {kind = "i32", name = "m", value = "M"}]
// CHECK-SAME: programmatic_launch = true
// CHECK-SAME: {box = [128, 128, 1], dims = [512, "M", 3], {{.*}} name = "tma_a", {{.*}} rank = 3 : i64, strides_bytes = [512, "M*512"]
// Its launch variants, chosen by the caller's expected rows per group (a
// launch of the kernel runs the kernel: the counts are on the device): tile
// M 128 down to 112 columns and 64 down to 16, in steps of 16, none wider
// than the kernel's 128.
// CHECK-SAME: variant_choice = "expected_m", variants = ["fp8_grouped_masked_gemm_rowwise_e4m3_e4m3_bf16_n256_k512_t128x112x128_s{{[0-9]+}}_g3_fast.json", "[[V1:fp8_grouped_masked_gemm_rowwise_e4m3_e4m3_bf16_n256_k512_t64x128x128_s[0-9]+_g3_fast]].json", "fp8_grouped_masked_gemm_rowwise_e4m3_e4m3_bf16_n256_k512_t64x112x128_s{{[0-9]+}}_g3_fast.json", "fp8_grouped_masked_gemm_rowwise_e4m3_e4m3_bf16_n256_k512_t64x96x128_s{{[0-9]+}}_g3_fast.json", "fp8_grouped_masked_gemm_rowwise_e4m3_e4m3_bf16_n256_k512_t64x80x128_s{{[0-9]+}}_g3_fast.json", "[[V2:fp8_grouped_masked_gemm_rowwise_e4m3_e4m3_bf16_n256_k512_t64x64x128_s[0-9]+_g3_fast]].json", "fp8_grouped_masked_gemm_rowwise_e4m3_e4m3_bf16_n256_k512_t64x48x128_s{{[0-9]+}}_g3_fast.json", "fp8_grouped_masked_gemm_rowwise_e4m3_e4m3_bf16_n256_k512_t64x32x128_s{{[0-9]+}}_g3_fast.json", "fp8_grouped_masked_gemm_rowwise_e4m3_e4m3_bf16_n256_k512_t64x16x128_s{{[0-9]+}}_g3_fast.json"]
// CHECK-NOT: tma_d
// The counts are the grid before's (programmatic launch): read only after
// that grid is complete.
// CHECK: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NOT: llvm.load
// The units with valid rows (the loop's bound): each group's count,
// clamped to [0, M] (signed: a negative count has none), makes
// ceil(rows / 128) unit rows of 2 unit columns (N = 256).
// CHECK: %[[C0P:.*]] = llvm.getelementptr %[[MM]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK: %[[C0:.*]] = llvm.load %[[C0P]] : !llvm.ptr<1> -> i32
// CHECK: %[[R0:.*]] = arith.minsi %[[C0]], %[[MP]] : i32
// CHECK: arith.maxsi %[[R0]], %c0_i32{{.*}} : i32
// CHECK: llvm.getelementptr %[[MM]]
// CHECK: llvm.getelementptr %[[MM]]
// CHECK: %[[SUM:.*]] = arith.addi %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK: %[[UNITS:.*]] = arith.muli %[[SUM]], %c2_i32{{.*}} : i32
// Producer: the CTAs stride over the valid units only. A unit's group is
// the last one starting at or before it (the counts read again, from L1);
// within it, down its unit rows first. No tile is skipped; A is loaded at
// (k, row in group, group).
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: scf.for %[[U:.*]] = %{{.*}} to %[[UNITS]] step %{{.*}} iter_args
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: %[[S1:.*]] = arith.cmpi uge, %[[U]], %{{.*}} : i32
// CHECK: arith.select %[[S1]], %c1_i32{{.*}}, %c0_i32{{.*}} : i32
// CHECK: %[[S2:.*]] = arith.cmpi uge, %[[U]], %{{.*}} : i32
// CHECK: %[[TG:.*]] = arith.select %[[S2]], %c2_i32{{.*}}, %{{.*}} : i32
// CHECK: %[[FIRST:.*]] = arith.select %[[S2]], %{{.*}}, %{{.*}} : i32
// CHECK: arith.select %[[S2]], %{{.*}}, %{{.*}} : i32
// CHECK: %[[MU:.*]] = arith.select %[[S2]], %{{.*}}, %{{.*}} : i32
// CHECK: %[[IN:.*]] = arith.subi %[[U]], %[[FIRST]] : i32
// CHECK: %[[MU1:.*]] = arith.select %{{.*}}, %c1_i32{{.*}}, %[[MU]] : i32
// CHECK: arith.remui %[[IN]], %[[MU1]] : i32
// CHECK: arith.divui %[[IN]], %[[MU1]] : i32
// CHECK-NOT: %c-1_i32
// CHECK: scf.for
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0, %{{.*}}, box[%{{.*}}, %{{.*}}, %[[TG]]]
// Consumers: the same units; the group's D and A scales at 64-bit offsets
// group * M rows. The tile is staged in shared memory (128-byte swizzled
// boxes of 64 columns), then each consumer thread stores 16 bytes of a box
// row per step, 32 rows apart, where the row is below the group's clamped
// count: rows left = count - tile row - the thread's first row.
// CHECK: nvvm.setmaxregister increase 232
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[UNITS]] step
// CHECK: nvvm.wgmma.mma_async
// CHECK: scf.if %{{.*}} {
// CHECK: %[[ES:.*]] = arith.cmpi uge, %{{.*}}, %{{.*}} : i32
// CHECK: %[[ES2:.*]] = arith.cmpi uge, %{{.*}}, %{{.*}} : i32
// CHECK: %[[EG:.*]] = arith.select %[[ES2]], %c2_i32{{.*}}, %{{.*}} : i32
// CHECK: arith.select %[[ES2]], %{{.*}}, %{{.*}} : i32
// CHECK: %[[ROWS:.*]] = arith.select %[[ES2]], %{{.*}}, %{{.*}} : i32
// CHECK: %[[G64:.*]] = arith.extui %[[EG]] : i32 to i64
// CHECK-NEXT: %[[M64:.*]] = arith.extui %[[MP]] : i32 to i64
// CHECK-NEXT: %[[R64:.*]] = arith.muli %[[G64]], %[[M64]] : i64
// CHECK: arith.muli %[[R64]], %c512_i64 : i64
// CHECK: llvm.getelementptr %[[DP]][%{{.*}}]
// CHECK: arith.muli %[[R64]], %c4_i64{{.*}} : i64
// CHECK: llvm.getelementptr %[[AS]][%{{.*}}]
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr<3>
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// CHECK: %[[LEFT0:.*]] = arith.subi %[[ROWS]], %{{.*}} : i32
// CHECK: %[[LEFT:.*]] = arith.subi %[[LEFT0]], %{{.*}} : i32
// CHECK: arith.cmpi slt, %c0_i32{{.*}}, %[[LEFT]] : i32
// CHECK-NEXT: scf.if
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: llvm.store %{{.*}}, %{{.*}} : vector<4xi32>, !llvm.ptr<1>
// CHECK: arith.cmpi slt, %c32_i32{{.*}}, %[[LEFT]] : i32
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: gpu.return
// The 64-row variants, in the same module: the same operands and
// parameters, one consumer warpgroup, a persistent grid of their tiles over
// D [3, M, 256]; each group's count makes ceil(rows / 64) unit rows of 2
// (64x128) or 4 (64x64) unit columns.
// CHECK: gpu.func @[[V1]](%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[MM1:.*]]: !llvm.ptr<1>, %[[MP1:.*]]: i32) kernel
// CHECK-SAME: block = [256, 1, 1]
// CHECK-SAME: tile = [64, 128, 128]
// CHECK-SAME: grid = {kind = "persistent", throughput = 75 : i64, tile_m = 64 : i64, tile_n = 128 : i64}
// CHECK-SAME: {alignment = 16 : i64, dtype = "bf16", name = "d", role = "output", shape = [3, "M", 256]}
// CHECK-SAME: variant_of = "[[K]]"
// CHECK-NOT: variants
// CHECK: %[[V1C:.*]] = arith.minsi %{{.*}}, %[[MP1]] : i32
// CHECK: %[[V1R:.*]] = arith.maxsi %[[V1C]], %{{.*}} : i32
// CHECK: %[[V1A:.*]] = arith.addi %[[V1R]], %c63_i32{{.*}} : i32
// CHECK: arith.divui %[[V1A]], %c64_i32{{.*}} : i32
// CHECK: arith.muli %{{.*}}, %c2_i32{{.*}} : i32
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: gpu.func @[[V2]](
// CHECK-SAME: block = [256, 1, 1]
// CHECK-SAME: tile = [64, 64, 128]
// CHECK-SAME: grid = {kind = "persistent", throughput = 57 : i64, tile_m = 64 : i64, tile_n = 64 : i64}
// CHECK-SAME: variant_of = "[[K]]"
// CHECK: arith.divui %{{.*}}, %c64_i32{{.*}} : i32
// CHECK: arith.muli %{{.*}}, %c4_i32{{.*}} : i32
func.func @rowwise(%a: tensor<3x?x512xf8E4M3FN>, %b: tensor<3x256x512xf8E4M3FN>, %sa: tensor<3x?x1xf32>, %sb: tensor<3x256x1xf32>, %c: tensor<3xi32>) -> tensor<3x?x256xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %c {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<row>, b_granularity = #fp8.granularity<row>, accumulation = #fp8.accumulation<fast>} : (tensor<3x?x512xf8E4M3FN>, tensor<3x256x512xf8E4M3FN>, tensor<3x?x1xf32>, tensor<3x256x1xf32>, tensor<3xi32>) -> tensor<3x?x256xbf16>
  return %d : tensor<3x?x256xbf16>
}

// -----

// Blockwise: the group's 1x128 A scales, MN-major per group, start at
// group * ceil(512/128) * roundup(M, 4) floats; the B scales at group * 8.
// CHECK-LABEL: module attributes
// CHECK: gpu.func @fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n256_k512_t128x{{[0-9]+}}x128_s{{[0-9]+}}_g2(
// CHECK-SAME: {alignment = 16 : i64, dtype = "f32", name = "a_scale_inv", role = "input", shape = [2, 4, "roundup(M, 4)"]}
// CHECK-SAME: {dtype = "f32", name = "b_scale_inv", role = "input", shape = [2, 2, 4]}
// CHECK-SAME: variant_choice = "expected_m", variants = ["fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n256_k512_t128x112x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n256_k512_t64x128x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n256_k512_t64x112x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n256_k512_t64x96x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n256_k512_t64x80x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n256_k512_t64x64x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n256_k512_t64x48x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n256_k512_t64x32x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n256_k512_t64x16x128_s{{[0-9]+}}_g2.json"]
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: scf.for
// CHECK: arith.muli %{{.*}}, %c4_i32{{.*}} : i32
// CHECK: arith.muli %{{.*}}, %{{.*}} : i64
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
func.func @blockwise(%a: tensor<2x?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, %sa: tensor<2x?x4xf32>, %sb: tensor<2x2x4xf32>, %c: tensor<2xi32>) -> tensor<2x?x256xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %c {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<2x?x512xf8E4M3FN>, tensor<2x256x512xf8E4M3FN>, tensor<2x?x4xf32>, tensor<2x2x4xf32>, tensor<2xi32>) -> tensor<2x?x256xbf16>
  return %d : tensor<2x?x256xbf16>
}

// -----

// Blockwise, N = 4096: the kernel's 128x192 tile, its variants 128 or 64 rows
// by 192 (64 rows), 160, 144, then 128 down to 112 (128 rows) or 16 (64
// rows): no 176, whose tiles would span three 128x128 B blocks. A tile
// with more than three B scale classes (N 80, 112, 144, 160) gives its
// producer 56 registers (the consumers of a 128-row tile 224) or 64 (the
// one consumer warpgroup of a 64-row tile keeps 240); the others keep 40
// and 232 / 240.
// CHECK-LABEL: module attributes
// CHECK: gpu.func @fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t128x192x128_s{{[0-9]+}}_g2(
// CHECK-SAME: variant_choice = "expected_m", variants = ["fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t128x160x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t128x144x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t128x128x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t128x112x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t64x192x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t64x160x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t64x144x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t64x128x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t64x112x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t64x96x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t64x80x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t64x64x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t64x48x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t64x32x128_s{{[0-9]+}}_g2.json", "fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t64x16x128_s{{[0-9]+}}_g2.json"]
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.setmaxregister increase 232
// CHECK: gpu.func @fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t128x160x128_s{{[0-9]+}}_g2(
// CHECK-SAME: tile = [128, 160, 128]
// CHECK: nvvm.setmaxregister decrease 56
// CHECK: nvvm.setmaxregister increase 224
// CHECK: gpu.func @fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t128x144x128_s{{[0-9]+}}_g2(
// CHECK: nvvm.setmaxregister decrease 56
// CHECK: nvvm.setmaxregister increase 224
// CHECK: gpu.func @fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t128x128x128_s{{[0-9]+}}_g2(
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.setmaxregister increase 232
// CHECK: gpu.func @fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t128x112x128_s{{[0-9]+}}_g2(
// CHECK: nvvm.setmaxregister decrease 56
// CHECK: nvvm.setmaxregister increase 224
// CHECK: gpu.func @fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t64x192x128_s{{[0-9]+}}_g2(
// CHECK-SAME: block = [256, 1, 1]
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.setmaxregister increase 240
// CHECK: gpu.func @fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t64x160x128_s{{[0-9]+}}_g2(
// CHECK: nvvm.setmaxregister decrease 64
// CHECK: nvvm.setmaxregister increase 240
// CHECK: gpu.func @fp8_grouped_masked_gemm_blockwise_e4m3_e4m3_bf16_n4096_k512_t64x16x128_s{{[0-9]+}}_g2(
// CHECK-SAME: tile = [64, 16, 128]
// CHECK: nvvm.setmaxregister decrease 40
func.func @blockwise_wide(%a: tensor<2x?x512xf8E4M3FN>, %b: tensor<2x4096x512xf8E4M3FN>, %sa: tensor<2x?x4xf32>, %sb: tensor<2x32x4xf32>, %c: tensor<2xi32>) -> tensor<2x?x4096xbf16> {
  %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %c {layout = #fp8.grouped_layout<m_masked>, a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>} : (tensor<2x?x512xf8E4M3FN>, tensor<2x4096x512xf8E4M3FN>, tensor<2x?x4xf32>, tensor<2x32x4xf32>, tensor<2xi32>) -> tensor<2x?x4096xbf16>
  return %d : tensor<2x?x4096xbf16>
}

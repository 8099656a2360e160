// The blockwise K loop in SASS (scripts/sass-loop.py reads the opcodes from
// the cubin): with each block's scales read one block ahead and every wait
// leaving its spin loop warp-uniformly, ptxas keeps the wgmma descriptors
// in uniform registers (no R2UR in the loop), the loop body starts with its
// 8 wgmmas, part 1's 64 promotion FMAs follow wait_group 1, then the wait
// for the next stage and its 3 scale loads, wait_group 0 and part 2's 32.
// A wait loop exiting on each lane's own result anywhere but at the top of
// the loop body put 32 R2UR in this loop (bench/NOTES.md).
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: fp8-compile %s --chip=sm_90a -o %t
// RUN: env PTXAS=%ptxas %python %fp8_src_root/scripts/sass-loop.py --list %t/fp8_gemm_blockwise_e4m3_e4m3_bf16_n7168_k7168_t128x192x128_s4.ptx fp8_gemm_blockwise_e4m3_e4m3_bf16_n7168_k7168_t128x192x128_s4 | FileCheck %s
// CHECK: 0 bytes spill stores
// CHECK-NEXT: K loop: {{.*}}FFMA 96, {{.*}}HGMMA 8,
// CHECK-NOT: R2UR
// CHECK-NOT: LDS {{.*}}HGMMA
// CHECK: HGMMAx4 WARPGROUP {{[^A-Z]*}}FFMA{{.*}} BRA {{.*}}SYNCS.TRYWAIT {{.*}}LDS{{.*}}WARPGROUP {{.*}}SYNCS.ARRIVE FFMA{{.*}}BRA{{$}}

func.func @blockwise(%a: tensor<?x7168xf8E4M3FN>, %b: tensor<7168x7168xf8E4M3FN>, %sa: tensor<?x56xf32>, %sb: tensor<56x56xf32>) -> tensor<?x7168xbf16> {
  %0 = fp8.scaled_matmul %a, %b, %sa, %sb {a_granularity = #fp8.granularity<tile 1x128>, b_granularity = #fp8.granularity<tile 128x128>, accumulation = #fp8.accumulation<promoted(128)>, config = #fp8.gemm_config<tile = 128x192x128, stages = 4>} : (tensor<?x7168xf8E4M3FN>, tensor<7168x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<56x56xf32>) -> tensor<?x7168xbf16>
  return %0 : tensor<?x7168xbf16>
}

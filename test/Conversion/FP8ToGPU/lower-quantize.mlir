// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-quantize="strict=true" | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_100a -fp8-lower-quantize="strict=true" | FileCheck %s --check-prefix=SM100
// RUN: fp8-opt %s -split-input-file -fp8-to-ptx=chip=sm_90a | FileCheck %s --check-prefix=PTX
// RUN: fp8-opt %s -split-input-file -fp8-to-ptx=chip=sm_100a | FileCheck %s --check-prefix=PTX100

// Blockwise 1x128, rowwise + transposed columnwise from one read: one
// kernel, its launcher (the kernel's operands as buffers, in order; the
// outputs written) and the metadata of the scale layouts. The op becomes a
// launch in destination-passing style, each output a new tensor.
// CHECK-LABEL: func.func private @fp8_quantize_blockwise_pow2_1x128_bf16_e4m3_r256_c512_clamp0x38d1b717_row_col_launch_into
// CHECK-SAME: (memref<256x512xbf16> {bufferization.access = "read"}, memref<256x512xf8E4M3FN> {bufferization.access = "write"}, memref<256x4xf32> {bufferization.access = "write"}, memref<512x256xf8E4M3FN> {bufferization.access = "write"}, memref<512x2xf32> {bufferization.access = "write"})
// CHECK-SAME: attributes {fp8.kernel = @fp8_kernels::@fp8_quantize_blockwise_pow2_1x128_bf16_e4m3_r256_c512_clamp0x38d1b717_row_col}
// CHECK-LABEL: func.func @blockwise
// CHECK-NOT: fp8.quantize
// CHECK-DAG: %[[Q:.*]] = tensor.empty() : tensor<256x512xf8E4M3FN>
// CHECK-DAG: %[[S:.*]] = tensor.empty() : tensor<256x4xf32>
// CHECK-DAG: %[[QT:.*]] = tensor.empty() : tensor<512x256xf8E4M3FN>
// CHECK-DAG: %[[ST:.*]] = tensor.empty() : tensor<512x2xf32>
// CHECK: %[[R:.*]]:4 = fp8.launch @fp8_quantize_blockwise_pow2_1x128_bf16_e4m3_r256_c512_clamp0x38d1b717_row_col_launch_into(%arg0, %[[Q]], %[[S]], %[[QT]], %[[ST]]) outputs [1, 2, 3, 4]
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3
// CHECK: gpu.func @fp8_quantize_blockwise_pow2_1x128_bf16_e4m3_r256_c512_clamp0x38d1b717_row_col
// CHECK-SAME: kind = "quantize"
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "rowwise_scale_inv", role = "output", shape = [4, 256]}
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "columnwise_scale_inv", role = "output", shape = [2, 512]}
// CHECK-SAME: rowwise_scale_layout = "mn_major_tma_aligned"
// Registers capped so that 3 CTAs fit on an SM, as many as shared memory allows.
// CHECK-SAME: nvvm.minctasm = 3 : i32
// A thread holds 8 rows of 8 elements; a 1x128 block is 16 lanes. The lanes
// trade partial maxima, each step halving the rows a lane keeps (4, 2, 1
// shuffles), finish with one butterfly step, compute one scale each, and
// fetch the multipliers of their 8 rows.
// CHECK-COUNT-4: gpu.shuffle  xor %{{.*}}, %c8_i32
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c4_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK-COUNT-8: gpu.shuffle  idx
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// The sign bits of the inputs, for NaN bytes.
// CHECK: nvvm.prmt
// The transposed tile goes through shared memory.
// CHECK: gpu.barrier
// PTX-LABEL: func.func @blockwise
// PTX: gpu.binary @fp8_kernels
// PTX-SAME: cvt.rn.satfinite.e4m3x2.f32
// PTX-SAME: shfl.sync.bfly.b32
// PTX-SAME: div.rn.f32
// PTX-NOT: ftz
func.func @blockwise(%x: tensor<256x512xbf16>) -> (tensor<256x512xf8E4M3FN>, tensor<256x4xf32>, tensor<512x256xf8E4M3FN>, tensor<512x2xf32>) {
  %q, %s, %qt, %st = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>}
      : tensor<256x512xbf16> -> rowwise(tensor<256x512xf8E4M3FN>, tensor<256x4xf32>) columnwise(tensor<512x256xf8E4M3FN>, tensor<512x2xf32>)
  return %q, %s, %qt, %st : tensor<256x512xf8E4M3FN>, tensor<256x4xf32>, tensor<512x256xf8E4M3FN>, tensor<512x2xf32>
}

// -----

// MXFP8: software UE8M0 round-up on sm_90a, cvt.rp.satfinite.ue8m0x2 on
// sm_100a; scales in the 128x4 atom layout.
// CHECK-LABEL: func.func @mx
// CHECK: gpu.func @fp8_quantize_mxfp8_1x32_f32_e4m3_r128_c256_row
// CHECK-SAME: name = "rowwise_scale_inv", role = "output", shape = [1, 2, 512]
// A 1x32 block is 4 lanes: after 4 + 2 shuffles each lane holds the maxima
// of 2 of the 8 blocks its 4 lanes share.
// CHECK-COUNT-4: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK-COUNT-8: gpu.shuffle  idx
// CHECK-NOT: i16(f8E8M0FNU)
// CHECK: gpu.return
// SM100-LABEL: func.func @mx
// SM100: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rp>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E8M0FNU)
// PTX100-LABEL: func.func @mx
// PTX100: gpu.binary @fp8_kernels
// PTX100-SAME: cvt.rp.satfinite.ue8m0x2.f32
func.func @mx(%x: tensor<128x256xf32>) -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>) {
  %q, %s = fp8.quantize %x {recipe = #fp8.mxfp8<>, granularity = #fp8.granularity<mx 1x32>}
      : tensor<128x256xf32> -> rowwise(tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
  return %q, %s : tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>
}

// -----

// Delayed scaling: the cast records its amax into the history it feeds,
// an output updated in place (its initial value the history).
// CHECK: func.func private @fp8_quantize_tensor_tensor_f16_e5m2_r64_c128_row_hist16_launch_into
// CHECK-SAME: memref<16xf32> {bufferization.access = "read-write"})
// CHECK-LABEL: func.func @delayed
// CHECK-NOT: fp8.update_amax_history
// CHECK: %[[R:.*]]:3 = fp8.launch @fp8_quantize_tensor_tensor_f16_e5m2_r64_c128_row_hist16_launch_into(%arg0, %arg1, %{{.*}}, %{{.*}}, %arg2) outputs [2, 3, 4] : (tensor<64x128xf16>, tensor<f32>, tensor<64x128xf8E5M2>, tensor<f32>, tensor<16xf32>) -> (tensor<64x128xf8E5M2>, tensor<f32>, tensor<16xf32>)
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
// CHECK: llvm.atomicrmw umax
func.func @delayed(%x: tensor<64x128xf16>, %scale: tensor<f32>, %h: tensor<16xf32>) -> (tensor<64x128xf8E5M2>, tensor<f32>, tensor<16xf32>) {
  %q, %s, %amax = fp8.quantize %x scale %scale {recipe = #fp8.delayed<history = 16>, granularity = #fp8.granularity<tensor>}
      : tensor<64x128xf16>, tensor<f32> -> rowwise(tensor<64x128xf8E5M2>, tensor<f32>) amax(tensor<f32>)
  %h1 = fp8.update_amax_history %h, %amax {recipe = #fp8.delayed<history = 16>} : tensor<16xf32>, tensor<f32>
  return %q, %s, %h1 : tensor<64x128xf8E5M2>, tensor<f32>, tensor<16xf32>
}

// -----

// Delayed scaling whose amax is returned as it is (e.g. by the forward of a
// split training step): the cast max-accumulates it into the zero-filled
// scalar of the result (operand amax_out, shape []).
// CHECK-LABEL: func.func @delayed_amax
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[R:.*]]:3 = fp8.launch @fp8_quantize_tensor_tensor_bf16_e4m3_r64_c128_row_amax_launch_into(%arg0, %arg1, %{{.*}}, %{{.*}}, %[[Z]]) outputs [2, 3, 4]
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
// CHECK: gpu.func @fp8_quantize_tensor_tensor_bf16_e4m3_r64_c128_row_amax
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "amax_out", role = "output", shape = []}
// CHECK-SAME: amax_out = "amax(x) is max-ed into amax_out[0] (NaN sticky): pass it zeroed"
// CHECK: llvm.atomicrmw umax
func.func @delayed_amax(%x: tensor<64x128xbf16>, %scale: tensor<f32>) -> (tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<f32>) {
  %q, %s, %amax = fp8.quantize %x scale %scale {recipe = #fp8.delayed<>, granularity = #fp8.granularity<tensor>}
      : tensor<64x128xbf16>, tensor<f32> -> rowwise(tensor<64x128xf8E4M3FN>, tensor<f32>) amax(tensor<f32>)
  return %q, %s, %amax : tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<f32>
}

// -----

// Current scaling: amax kernel + a cast that applies the rule to the amax
// (compute_scale fused into it).
// The amax kernel max-accumulates into a zero-filled scalar.
// CHECK-LABEL: func.func @current
// CHECK: %[[C0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<f32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%[[C0]] : f32) outs(%[[E]] : tensor<f32>)
// CHECK: %[[A:.*]] = fp8.launch @fp8_amax_bf16_r128_c128_launch_into(%arg0, %[[Z]]) outputs [1]
// CHECK-NOT: fp8.compute_scale
// CHECK: fp8.launch @fp8_quantize_current_tensor_bf16_e4m3_r128_c128_col_launch_into(%arg0, %[[A]], %{{.*}}, %{{.*}}) outputs [2, 3]
func.func @current(%x: tensor<128x128xbf16>) -> (tensor<128x128xf8E4M3FN>, tensor<f32>) {
  %amax = fp8.amax %x : tensor<128x128xbf16> -> tensor<f32>
  %s, %si = fp8.compute_scale %amax {recipe = #fp8.current<>, element_type = f8E4M3FN} : tensor<f32> -> tensor<f32>, tensor<f32>
  %qt, %st = fp8.quantize %x scale %s {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>}
      : tensor<128x128xbf16>, tensor<f32> -> columnwise(tensor<128x128xf8E4M3FN>, tensor<f32>)
  return %qt, %st : tensor<128x128xf8E4M3FN>, tensor<f32>
}

// -----

// Columnwise outputs stored untransposed ([R, C], MN-major GEMM operands on
// sm_100a), rowwise + columnwise from one read: the loaded tile is kept in
// shared memory as loaded (32 KiB of bf16, the stash) and read back after
// the rowwise output; each 32x1 block's amax is a column maximum (shuffle
// across the two rows of a warp, then over the warps through shared
// memory), its scale computed once and applied to the stash read again.
// Scales in the transposed output's layout.
// CHECK-LABEL: func.func @untransposed
// CHECK: fp8.launch @fp8_quantize_mxfp8_1x32_bf16_e4m3_r256_c384_row_col_untransposed_launch_into(%arg0, {{.*}}) outputs [1, 2, 3, 4] : (tensor<256x384xbf16>, tensor<256x384xf8E4M3FN>, tensor<256x12xf8E8M0FNU>, tensor<256x384xf8E4M3FN>, tensor<384x8xf8E8M0FNU>) -> (tensor<256x384xf8E4M3FN>, tensor<256x12xf8E8M0FNU>, tensor<256x384xf8E4M3FN>, tensor<384x8xf8E8M0FNU>)
// CHECK: gpu.func @fp8_quantize_mxfp8_1x32_bf16_e4m3_r256_c384_row_col_untransposed
// CHECK-SAME: dynamic_shared_memory_bytes = 51232
// CHECK-SAME: {alignment = 8 : i64, dtype = "e4m3", name = "columnwise", role = "output", shape = [256, 384]}
// CHECK-SAME: {alignment = 1 : i64, dtype = "ue8m0", name = "columnwise_scale_inv", role = "output", shape = [3, 2, 512]}
// CHECK-SAME: columnwise_layout = "untransposed"
// CHECK-SAME: nvvm.minctasm = 3
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK: nvvm.bar.warp.sync
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xf32>
// CHECK: gpu.return
// SM100-LABEL: func.func @untransposed
// SM100: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rp>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E8M0FNU)
// PTX-LABEL: func.func @untransposed
// PTX: gpu.binary @fp8_kernels
// PTX-SAME: bar.sync
// PTX-SAME: cvt.rn.satfinite.e4m3x2.f32
// PTX100-LABEL: func.func @untransposed
// PTX100: cvt.rp.satfinite.ue8m0x2.f32
func.func @untransposed(%x: tensor<256x384xbf16>) -> (tensor<256x384xf8E4M3FN>, tensor<256x12xf8E8M0FNU>, tensor<256x384xf8E4M3FN>, tensor<384x8xf8E8M0FNU>) {
  %q, %s, %qc, %sc = fp8.quantize %x {recipe = #fp8.mxfp8<>, granularity = #fp8.granularity<mx 1x32>, columnwise_layout = #fp8.columnwise_layout<untransposed>}
      : tensor<256x384xbf16> -> rowwise(tensor<256x384xf8E4M3FN>, tensor<256x12xf8E8M0FNU>) columnwise(tensor<256x384xf8E4M3FN>, tensor<384x8xf8E8M0FNU>)
  return %q, %s, %qc, %sc : tensor<256x384xf8E4M3FN>, tensor<256x12xf8E8M0FNU>, tensor<256x384xf8E4M3FN>, tensor<384x8xf8E8M0FNU>
}

// -----

// 128x1 blocks (1x128 columnwise, untransposed): one row block per tile, R
// need not be a multiple of 16; scales MN-major [ceil(R/128), roundup(C, 4)].
// Whole tiles take a copy of the code without guards.
// CHECK-LABEL: func.func @untransposed_1x128
// CHECK: gpu.func @fp8_quantize_blockwise_pow2_1x128_f16_e4m3_r100_c128_clamp0x38d1b717_col_untransposed
// CHECK-SAME: dynamic_shared_memory_bytes = 37408
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "columnwise_scale_inv", role = "output", shape = [1, 128]}
func.func @untransposed_1x128(%x: tensor<100x128xf16>) -> (tensor<100x128xf8E4M3FN>, tensor<128x1xf32>) {
  %qc, %sc = fp8.quantize %x {recipe = #fp8.blockwise<>, granularity = #fp8.granularity<tile 1x128>, columnwise_layout = #fp8.columnwise_layout<untransposed>}
      : tensor<100x128xf16> -> columnwise(tensor<100x128xf8E4M3FN>, tensor<128x1xf32>)
  return %qc, %sc : tensor<100x128xf8E4M3FN>, tensor<128x1xf32>
}

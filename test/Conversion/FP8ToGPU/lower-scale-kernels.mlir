// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -fp8-lower-quantize="strict=true" | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-to-ptx=chip=sm_90a | FileCheck %s --check-prefix=PTX
// RUN: fp8-opt %s -split-input-file -fp8-to-ptx=chip=sm_100a | FileCheck %s --check-prefix=PTX

// fp8.compute_scale and fp8.update_amax_history that no cast absorbs become
// one-CTA kernels (QuantizeKernels/ScaleKernels).

// Current scaling: one thread, the rule applied to the amax.
// CHECK-LABEL: func.func @current
// CHECK-NOT: fp8.compute_scale
// CHECK: %[[R:.*]]:2 = fp8.launch @fp8_compute_scale_current_e5m2_eps0x3a83126f_pow2_launch_into(%arg0, %{{.*}}, %{{.*}}) outputs [1, 2] : (tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
// CHECK: return %[[R]]#0, %[[R]]#1
// CHECK: gpu.func @fp8_compute_scale_current_e5m2_eps0x3a83126f_pow2
// CHECK-SAME: compute_scale = {dtype = "e5m2", epsilon = 1.000000e-03 : f32, pow2 = true, rule = "current"}
// CHECK-SAME: grid = {dims = [1, 1, 1], kind = "fixed"}, kind = "compute_scale"
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "amax", role = "input", shape = []}
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "scale", role = "output", shape = []}
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "scale_inv", role = "output", shape = []}
// CHECK-SAME: nvvm.maxntid = array<i32: 1, 1, 1>
// amax < epsilon -> epsilon, then fp8_max / amax, the power of two kept.
// CHECK: arith.cmpf olt
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: arith.andi %{{.*}}, %c-8388608_i32
// CHECK: gpu.return
// PTX-LABEL: func.func @current
// PTX: gpu.binary @fp8_kernels
// PTX-SAME: div.rn.f32
// PTX-NOT: ftz
func.func @current(%amax: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %s, %si = fp8.compute_scale %amax {recipe = #fp8.current<epsilon = 1.0e-3, pow2 = true>, element_type = f8E5M2}
      : tensor<f32> -> tensor<f32>, tensor<f32>
  return %s, %si : tensor<f32>, tensor<f32>
}

// -----

// Delayed scaling: the history's amax (maxNum over the CTA), the scale, and
// the history rolled in place (its launcher argument is read and written;
// the launch's outputs are in the kernel's operand order).
// CHECK-LABEL: func.func private @fp8_compute_scale_delayed_e4m3_h1024_max_m2_launch_into
// CHECK-SAME: (memref<1024xf32> {bufferization.access = "read-write"}, memref<f32> {bufferization.access = "read"}, memref<f32> {bufferization.access = "write"}, memref<f32> {bufferization.access = "write"})
// CHECK-LABEL: func.func @delayed
// CHECK: %[[R:.*]]:3 = fp8.launch @fp8_compute_scale_delayed_e4m3_h1024_max_m2_launch_into(%arg0, %arg1, %{{.*}}, %{{.*}}) outputs [0, 2, 3] : (tensor<1024xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<1024xf32>, tensor<f32>, tensor<f32>)
// CHECK: return %[[R]]#1, %[[R]]#2, %[[R]]#0
// CHECK: gpu.func @fp8_compute_scale_delayed_e4m3_h1024_max_m2
// CHECK-SAME: compute_scale = {algo = "max", amax_history = "read, then rolled in place
// CHECK-SAME: history = 1024 : i64, margin = 2 : i64, rule = "delayed"}
// CHECK-SAME: dynamic_shared_memory_bytes = 32
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "amax_history", role = "output", shape = [1024]}
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "previous_scale", role = "input", shape = []}
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// Four chunks of 256 slots, each read before the barrier and written after.
// CHECK: %[[C4:.*]] = arith.constant 4 : i32
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C4]]
// CHECK: scf.if
// CHECK: llvm.load
// CHECK: gpu.barrier
// CHECK: llvm.store
// CHECK: llvm.intr.maxnum
// CHECK-COUNT-5: gpu.shuffle  xor
// fp8_max * 2^-2 over the amax when it is finite and positive.
// CHECK: arith.cmpf ogt
// CHECK: arith.constant 1.120000e+02 : f32
// CHECK: arith.divf
// PTX-LABEL: func.func @delayed
// PTX: gpu.binary @fp8_kernels
// PTX-SAME: bar.sync
// PTX-SAME: max.f32
// PTX-NOT: __nv_fmaxf
func.func @delayed(%h: tensor<1024xf32>, %prev: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<1024xf32>) {
  %s, %si, %next = fp8.compute_scale %h, %prev {recipe = #fp8.delayed<margin = 2>, element_type = f8E4M3FN}
      : tensor<1024xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<1024xf32>
  return %s, %si, %next : tensor<f32>, tensor<f32>, tensor<1024xf32>
}

// -----

// most_recent: slot 0 is the amax, no reduction.
// CHECK-LABEL: func.func @most_recent
// CHECK: gpu.func @fp8_compute_scale_delayed_e5m2_h16_most_recent_m0
// CHECK-SAME: dynamic_shared_memory_bytes = 0
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @most_recent(%h: tensor<16xf32>, %prev: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<16xf32>) {
  %s, %si, %next = fp8.compute_scale %h, %prev {recipe = #fp8.delayed<history = 16, algo = most_recent>, element_type = f8E5M2}
      : tensor<16xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<16xf32>
  return %s, %si, %next : tensor<f32>, tensor<f32>, tensor<16xf32>
}

// -----

// update_amax_history whose amax no cast kernel produces (here a function
// argument): slot 0 = max(slot 0, amax), NaN sticky, in place.
// CHECK-LABEL: func.func @record
// CHECK-NOT: fp8.update_amax_history
// CHECK: fp8.launch @fp8_update_amax_history_h16_launch_into(%arg0, %arg1) outputs [0] : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
// CHECK: gpu.func @fp8_update_amax_history_h16
// CHECK-SAME: kind = "update_amax_history"
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "amax_history", role = "output", shape = [16]}
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "amax", role = "input", shape = []}
// CHECK-SAME: update_amax_history = {amax_history = "slot 0 becomes max(slot 0, amax), NaN sticky, in place", history = 16 : i64}
// CHECK: arith.cmpf ogt
// CHECK: arith.constant 2143289344 : i32
// CHECK: arith.cmpf uno
func.func @record(%h: tensor<16xf32>, %amax: tensor<f32>) -> tensor<16xf32> {
  %h1 = fp8.update_amax_history %h, %amax {recipe = #fp8.delayed<history = 16>} : tensor<16xf32>, tensor<f32>
  return %h1 : tensor<16xf32>
}

// -----

// A compute_scale(current) that a cast absorbs gets no kernel of its own;
// one with another user does.
// CHECK-LABEL: func.func @fused_and_kept
// CHECK: %[[A:.*]] = fp8.launch @fp8_amax_bf16_r128_c128_launch_into
// CHECK: fp8.launch @fp8_compute_scale_current_e4m3_launch_into(%[[A]],
// CHECK: fp8.launch @fp8_quantize_current_tensor_bf16_e4m3_r128_c128_row_launch_into(%arg0, %[[A]],
func.func @fused_and_kept(%x: tensor<128x128xbf16>) -> (tensor<128x128xf8E4M3FN>, tensor<f32>, tensor<f32>) {
  %amax = fp8.amax %x : tensor<128x128xbf16> -> tensor<f32>
  %s, %si = fp8.compute_scale %amax {recipe = #fp8.current<>, element_type = f8E4M3FN} : tensor<f32> -> tensor<f32>, tensor<f32>
  %q, %qs = fp8.quantize %x scale %s {recipe = #fp8.current<>, granularity = #fp8.granularity<tensor>}
      : tensor<128x128xbf16>, tensor<f32> -> rowwise(tensor<128x128xf8E4M3FN>, tensor<f32>)
  return %q, %qs, %si : tensor<128x128xf8E4M3FN>, tensor<f32>, tensor<f32>
}

// RUN: fp8-opt %s --fp8-build-host-program --split-input-file | FileCheck %s

// A training step's shape after the fp8 lowerings: zero an amax, reduce x
// into it, quantize x with its scale, one GEMM with a weight given in FP8,
// and a history updated in place. The rows of x are a run-time value.
// CHECK-LABEL: module attributes
// CHECK-SAME: fp8.host_program = {chip = "sm_90a",
// CHECK-SAME: functions = [{
// The buffers, in order of first use: the amax (4 bytes) is dead after the
// cast, so the GEMM's output scale takes its place; q and q_scale follow.
// CHECK-SAME: arguments = [{alignment = 16 : i64, dtype = "bf16", name = "x", shape = ["x_0", 2048]},
// CHECK-SAME: {alignment = 1 : i64, dtype = "e4m3", name = "w", shape = [7168, 2048]},
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "arg2", shape = []},
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "history", shape = [4], written = true}],
// CHECK-SAME: buffers = [{alignment = 256 : i64, bytes = 4 : i64, dtype = "f32", name = "buffer0", offset = 0 : i64, shape = []},
// CHECK-SAME: {alignment = 256 : i64, bytes = "x_0*2048", dtype = "e4m3", name = "buffer1", offset = 256 : i64, shape = ["x_0", 2048]},
// CHECK-SAME: {alignment = 256 : i64, bytes = 4 : i64, dtype = "f32", name = "buffer2", offset = "roundup(x_0*2048, 256) + 256", shape = []},
// CHECK-SAME: {alignment = 256 : i64, bytes = 4 : i64, dtype = "f32", name = "buffer3", offset = 0 : i64, shape = []}],
// CHECK-SAME: name = "step",
// CHECK-SAME: results = [{alignment = 2 : i64, dtype = "bf16", name = "y", shape = ["x_0", 7168]},
// CHECK-SAME: {alias_of = "history", alignment = 4 : i64, dtype = "f32", name = "result1", shape = [4]}],
// CHECK-SAME: steps = [{byte = 0 : i64, kind = "fill", target = "buffer0"},
// CHECK-SAME: {kernel = "amax", kind = "launch", operands = {amax = "buffer0", x = "x"}, symbols = {R = "x_0"}},
// CHECK-SAME: {kernel = "cast", kind = "launch", operands = {amax = "buffer0", history = "history", q = "buffer1", q_scale_inv = "buffer2", x = "x"}, symbols = {R = "x_0"}},
// CHECK-SAME: {byte = 0 : i64, kind = "fill", target = "buffer3"},
// CHECK-SAME: {kernel = "gemm", kind = "launch", operands = {a = "buffer1", a_scale_inv = "buffer2", amax = "buffer3", b = "w", b_scale_inv = "arg2", d = "y"}, symbols = {M = "x_0"}}],
// CHECK-SAME: symbols = [{argument = "x", dim = 0 : i64, name = "x_0"}],
// CHECK-SAME: workspace_bytes = "roundup(x_0*2048, 256) + 512"}],
// CHECK-SAME: kernels = ["amax", "cast", "gemm"]}
module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">, gpu.container_module} {
  gpu.module @fp8_kernels {
    gpu.func @amax() kernel attributes {fp8.kernel_metadata = {operands = [
        {name = "x", dtype = "bf16", shape = ["R", 2048], role = "input", alignment = 16 : i64},
        {name = "amax", dtype = "f32", shape = [], role = "output", alignment = 4 : i64}]}} {
      gpu.return
    }
    gpu.func @cast() kernel attributes {fp8.kernel_metadata = {operands = [
        {name = "x", dtype = "bf16", shape = ["R", 2048], role = "input", alignment = 16 : i64},
        {name = "amax", dtype = "f32", shape = [], role = "input"},
        {name = "q", dtype = "e4m3", shape = ["R", 2048], role = "output", alignment = 8 : i64},
        {name = "q_scale_inv", dtype = "f32", shape = [], role = "output"},
        {name = "history", dtype = "f32", shape = [4], role = "output"}]}} {
      gpu.return
    }
    gpu.func @gemm() kernel attributes {fp8.kernel_metadata = {operands = [
        {name = "a", dtype = "e4m3", shape = ["M", 2048], role = "input"},
        {name = "b", dtype = "e4m3", shape = [7168, 2048], role = "input"},
        {name = "a_scale_inv", dtype = "f32", shape = [], role = "input"},
        {name = "b_scale_inv", dtype = "f32", shape = [], role = "input"},
        {name = "d", dtype = "bf16", shape = ["M", 7168], role = "output"},
        {name = "amax", dtype = "f32", shape = [], role = "output"}],
        tensor_maps = [{name = "tma_a", operand = "a", dtype = "e4m3", rank = 2 : i64,
                        dims = [2048, "M"], strides_bytes = [2048], box = [128, 128],
                        swizzle = "128B"}]}} {
      gpu.return
    }
  }
  func.func private @amax_launch_into(memref<?x2048xbf16> {bufferization.access = "read"}, memref<f32> {bufferization.access = "read-write"}) attributes {fp8.kernel = @fp8_kernels::@amax}
  func.func private @cast_launch_into(memref<?x2048xbf16> {bufferization.access = "read"}, memref<f32> {bufferization.access = "read"}, memref<?x2048xf8E4M3FN> {bufferization.access = "write"}, memref<f32> {bufferization.access = "write"}, memref<4xf32> {bufferization.access = "read-write"}) attributes {fp8.kernel = @fp8_kernels::@cast}
  func.func private @gemm_launch_into(memref<?x2048xf8E4M3FN>, memref<7168x2048xf8E4M3FN>, memref<f32>, memref<f32>, memref<?x7168xbf16>, memref<f32>) attributes {fp8.kernel = @fp8_kernels::@gemm}
  func.func @step(%x: memref<?x2048xbf16> {fp8.name = "x"}, %w: memref<7168x2048xf8E4M3FN> {fp8.name = "w"}, %ws: memref<f32>, %history: memref<4xf32> {fp8.name = "history"}) -> (memref<?x7168xbf16> {fp8.name = "y"}, memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %rows = memref.dim %x, %c0 : memref<?x2048xbf16>
    %amax = memref.alloc() {alignment = 64 : i64} : memref<f32>
    linalg.fill ins(%zero : f32) outs(%amax : memref<f32>)
    call @amax_launch_into(%x, %amax) : (memref<?x2048xbf16>, memref<f32>) -> ()
    %q = memref.alloc(%rows) : memref<?x2048xf8E4M3FN>
    %qs = memref.alloc() : memref<f32>
    call @cast_launch_into(%x, %amax, %q, %qs, %history) : (memref<?x2048xbf16>, memref<f32>, memref<?x2048xf8E4M3FN>, memref<f32>, memref<4xf32>) -> ()
    %y = memref.alloc(%rows) : memref<?x7168xbf16>
    %yamax = memref.alloc() : memref<f32>
    linalg.fill ins(%zero : f32) outs(%yamax : memref<f32>)
    call @gemm_launch_into(%q, %w, %qs, %ws, %y, %yamax) : (memref<?x2048xf8E4M3FN>, memref<7168x2048xf8E4M3FN>, memref<f32>, memref<f32>, memref<?x7168xbf16>, memref<f32>) -> ()
    return %y, %history : memref<?x7168xbf16>, memref<4xf32>
  }
}

// -----

// Two arguments whose rows one kernel symbol binds have one symbol, named
// after the first; a buffer a kernel writes in a padded layout (MN-major
// scales, [4, roundup(R, 4)] for a [R, 4] tensor) takes the kernel's bytes;
// a static transposed layout of the same bytes is the tensor's; buffers of
// constant size reuse the place of a dead one no smaller.
// CHECK-LABEL: module attributes
// CHECK-SAME: arguments = [{alignment = 16 : i64, dtype = "bf16", name = "a", shape = ["a_0", 512]},
// CHECK-SAME: {alignment = 16 : i64, dtype = "bf16", name = "b", shape = ["a_0", 512]}],
// CHECK-SAME: buffers = [{alignment = 256 : i64, bytes = 64 : i64, dtype = "f32", name = "buffer0", offset = 0 : i64, shape = [16]},
// CHECK-SAME: {alignment = 256 : i64, bytes = "roundup(a_0, 4)*16", dtype = "f32", name = "buffer1", offset = 256 : i64, shape = ["a_0", 4]},
// CHECK-SAME: {alignment = 256 : i64, bytes = 8192 : i64, dtype = "f32", name = "buffer2", offset = "roundup(roundup(a_0, 4)*16, 256) + 256", shape = [512, 4]},
// CHECK-SAME: {alignment = 256 : i64, bytes = 16 : i64, dtype = "f32", name = "buffer3", offset = 0 : i64, shape = [4]}],
// CHECK-SAME: name = "pair", results = [],
// CHECK-SAME: {kernel = "scales", kind = "launch", operands = {s = "buffer1", st = "buffer2", x = "a", y = "b"}, symbols = {R = "a_0"}}
// CHECK-SAME: symbols = [{argument = "a", dim = 0 : i64, name = "a_0"}]
// CHECK-SAME: workspace_bytes = "roundup(roundup(a_0, 4)*16, 256) + 8448"
module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">, gpu.container_module} {
  gpu.module @fp8_kernels {
    gpu.func @first() kernel attributes {fp8.kernel_metadata = {operands = [
        {name = "o", dtype = "f32", shape = [16], role = "output"}]}} {
      gpu.return
    }
    gpu.func @scales() kernel attributes {fp8.kernel_metadata = {operands = [
        {name = "x", dtype = "bf16", shape = ["R", 512], role = "input"},
        {name = "y", dtype = "bf16", shape = ["R", 512], role = "input"},
        {name = "s", dtype = "f32", shape = [4, "roundup(R, 4)"], role = "output"},
        {name = "st", dtype = "f32", shape = [4, 512], role = "output"}],
        tensor_maps = [{name = "tx", operand = "x", dtype = "bf16", rank = 2 : i64,
                        dims = [512, "R"], strides_bytes = [1024], box = [64, 128],
                        swizzle = "128B"},
                       {name = "ty", operand = "y", dtype = "bf16", rank = 2 : i64,
                        dims = [512, "R"], strides_bytes = [1024], box = [64, 128],
                        swizzle = "128B"}]}} {
      gpu.return
    }
    gpu.func @last() kernel attributes {fp8.kernel_metadata = {operands = [
        {name = "o", dtype = "f32", shape = [4], role = "output"}]}} {
      gpu.return
    }
  }
  func.func private @first_launch_into(memref<16xf32>) attributes {fp8.kernel = @fp8_kernels::@first}
  func.func private @scales_launch_into(memref<?x512xbf16>, memref<?x512xbf16>, memref<?x4xf32>, memref<512x4xf32>) attributes {fp8.kernel = @fp8_kernels::@scales}
  func.func private @last_launch_into(memref<4xf32>) attributes {fp8.kernel = @fp8_kernels::@last}
  func.func @pair(%a: memref<?x512xbf16> {fp8.name = "a"}, %b: memref<?x512xbf16> {fp8.name = "b"}) {
    %c0 = arith.constant 0 : index
    %first = memref.alloc() : memref<16xf32>
    call @first_launch_into(%first) : (memref<16xf32>) -> ()
    %rows = memref.dim %a, %c0 : memref<?x512xbf16>
    %s = memref.alloc(%rows) : memref<?x4xf32>
    %st = memref.alloc() : memref<512x4xf32>
    call @scales_launch_into(%a, %b, %s, %st) : (memref<?x512xbf16>, memref<?x512xbf16>, memref<?x4xf32>, memref<512x4xf32>) -> ()
    %last = memref.alloc() : memref<4xf32>
    call @last_launch_into(%last) : (memref<4xf32>) -> ()
    return
  }
}

// -----

// Arguments and results that kernels read or write in a larger layout than
// their types (1x128 scales MN-major, [4, roundup(102, 4)] for [102, 4]) are
// passed in that layout; a history the function still reads after a kernel
// updated it is copied first.
// CHECK-LABEL: module attributes
// CHECK-SAME: arguments = [{alignment = 2 : i64, dtype = "bf16", name = "x", shape = [102, 512]},
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "s", shape = [4, 104]},
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "h", shape = [8], written = true}],
// CHECK-SAME: name = "saved",
// CHECK-SAME: results = [{alignment = 4 : i64, dtype = "f32", name = "s_out", shape = [4, 104]},
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "h_before", shape = [8]}],
// CHECK-SAME: steps = [{kind = "copy", source = "h", target = "h_before"},
// CHECK-SAME: {kernel = "scales", kind = "launch", operands = {h = "h", s = "s", t = "s_out", x = "x"}, symbols = {R = 102 : i64}}]
module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">, gpu.container_module} {
  gpu.module @fp8_kernels {
    gpu.func @scales() kernel attributes {fp8.kernel_metadata = {operands = [
        {name = "x", dtype = "bf16", shape = ["R", 512], role = "input"},
        {name = "s", dtype = "f32", shape = [4, "roundup(R, 4)"], role = "input"},
        {name = "t", dtype = "f32", shape = [4, "roundup(R, 4)"], role = "output"},
        {name = "h", dtype = "f32", shape = [8], role = "output"}]}} {
      gpu.return
    }
  }
  func.func private @scales_launch_into(memref<102x512xbf16>, memref<102x4xf32>, memref<102x4xf32>, memref<8xf32>) attributes {fp8.kernel = @fp8_kernels::@scales}
  func.func @saved(%x: memref<102x512xbf16> {fp8.name = "x"}, %s: memref<102x4xf32> {fp8.name = "s"}, %h: memref<8xf32> {fp8.name = "h"}) -> (memref<102x4xf32> {fp8.name = "s_out"}, memref<8xf32> {fp8.name = "h_before"}) {
    %t = memref.alloc() : memref<102x4xf32>
    %before = memref.alloc() : memref<8xf32>
    memref.copy %h, %before : memref<8xf32> to memref<8xf32>
    call @scales_launch_into(%x, %s, %t, %h) : (memref<102x512xbf16>, memref<102x4xf32>, memref<102x4xf32>, memref<8xf32>) -> ()
    return %t, %before : memref<102x4xf32>, memref<8xf32>
  }
}

// -----

// An argument a kernel reads in another layout than its type's (1x128 scales
// MN-major, [ceil(K/128), roundup(R, 4)] for `?x4`) is passed in that
// layout: its extents are expressions of the symbols other arguments bind,
// which the runtime checks at a call, and its own type's extent binds no
// symbol.
// CHECK-LABEL: module attributes
// CHECK-SAME: arguments = [{alignment = 2 : i64, dtype = "bf16", name = "arg0", shape = ["arg0_0", 64]},
// CHECK-SAME: {alignment = 4 : i64, dtype = "f32", name = "arg1", shape = [4, "roundup(arg0_0, 4)"]}]
// CHECK-SAME: steps = [{kernel = "k", kind = "launch", operands = {s = "arg1", x = "arg0"}, symbols = {R = "arg0_0"}}],
// CHECK-SAME: symbols = [{argument = "arg0", dim = 0 : i64, name = "arg0_0"}]
module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">, gpu.container_module} {
  gpu.module @fp8_kernels {
    gpu.func @k() kernel attributes {fp8.kernel_metadata = {operands = [
        {name = "x", dtype = "bf16", shape = ["R", 64], role = "input"},
        {name = "s", dtype = "f32", shape = [4, "roundup(R, 4)"], role = "input"}]}} {
      gpu.return
    }
  }
  func.func private @k_launch_into(memref<?x64xbf16>, memref<?x4xf32>) attributes {fp8.kernel = @fp8_kernels::@k}
  func.func @padded(%x: memref<?x64xbf16>, %s: memref<?x4xf32>) {
    call @k_launch_into(%x, %s) : (memref<?x64xbf16>, memref<?x4xf32>) -> ()
    return
  }
}

// RUN: fp8-opt %s --fp8-build-host-program --split-input-file --verify-diagnostics

// Every op of a public function is part of its host program or an error
// naming it; nothing is dropped.

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  func.func @cast_left(%x: memref<4xf32>) -> memref<4xf32> {
    // expected-error @+1 {{host program of @cast_left: 'bufferization.to_tensor' has no kernel: a host program runs kernel launches, fills and allocations only}}
    %t = bufferization.to_tensor %x : memref<4xf32> to tensor<4xf32>
    %b = bufferization.to_buffer %t : tensor<4xf32> to memref<4xf32>
    return %b : memref<4xf32>
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  // expected-error @+1 {{host program of @tensor_arg: argument 0 has type 'tensor<4xf32>': the runtime takes dense row-major memrefs of rank 0 to 4 of f8E4M3FN, f8E5M2, f8E8M0FNU, bf16, f16 or f32}}
  func.func @tensor_arg(%x: tensor<4xf32>) {
    return
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  // expected-error @+1 {{argument 0 has type 'memref<4x4xf32, strided<[8, 1]>>'}}
  func.func @strided(%x: memref<4x4xf32, strided<[8, 1]>>) {
    return
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  // expected-error @+1 {{result 0 has type 'memref<4xi64>'}}
  func.func @int_result() -> memref<4xi64> {
    %a = memref.alloc() : memref<4xi64>
    return %a : memref<4xi64>
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  func.func private @helper(memref<4xf32>)
  func.func @not_a_launcher(%x: memref<4xf32>) {
    // expected-error @+1 {{'func.call' of @helper, which is not a kernel launcher (a declaration with 'fp8.kernel')}}
    call @helper(%x) : (memref<4xf32>) -> ()
    return
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  func.func @fill_one(%x: memref<4xf32>) {
    %one = arith.constant 1.0 : f32
    // expected-error @+1 {{'linalg.fill' with 1.000000e+00 : f32, whose bytes differ: the runtime fills with one byte value}}
    linalg.fill ins(%one : f32) outs(%x : memref<4xf32>)
    return
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  func.func @sub(%x: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %x, %c0 : memref<?xf32>
    // expected-error @+1 {{'arith.subi' has no kernel}}
    %m = arith.subi %n, %c1 : index
    %a = memref.alloc(%m) : memref<?xf32>
    return
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  // expected-error @+1 {{host program of @twice: fp8.name "x y" of arg 0 is not an identifier}}
  func.func @twice(%x: memref<4xf32> {fp8.name = "x y"}) {
    return
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  func.func @same_result() -> (memref<4xf32>, memref<4xf32>) {
    %a = memref.alloc() : memref<4xf32>
    // expected-error @+1 {{results 0 and 1 are the same allocation}}
    return %a, %a : memref<4xf32>, memref<4xf32>
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  func.func @named_twice(%x: memref<4xf32> {fp8.name = "x"}) -> (memref<4xf32> {fp8.name = "x"}) {
    %a = memref.alloc() : memref<4xf32>
    // expected-error @+1 {{result 0 is named 'x', as another argument or result is}}
    return %a : memref<4xf32>
  }
}

// -----

// A kernel operand of another element type, rank or count than the launcher
// passes, a launcher marked against the kernel's roles, and two values of
// one kernel symbol.
module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">, gpu.container_module} {
  gpu.module @fp8_kernels {
    gpu.func @k() kernel attributes {fp8.kernel_metadata = {operands = [
        {name = "x", dtype = "bf16", shape = ["R", 64], role = "input"},
        {name = "y", dtype = "f32", shape = ["R", 64], role = "output"}]}} {
      gpu.return
    }
  }
  func.func private @k_f16(memref<8x64xf16>, memref<8x64xf32>) attributes {fp8.kernel = @fp8_kernels::@k}
  func.func @wrong_dtype(%x: memref<8x64xf16>, %y: memref<8x64xf32>) {
    // expected-error @+1 {{kernel operand 'x' is bf16, but 'memref<8x64xf16>' is passed}}
    call @k_f16(%x, %y) : (memref<8x64xf16>, memref<8x64xf32>) -> ()
    return
  }
  func.func private @k_one(memref<8x64xbf16>) attributes {fp8.kernel = @fp8_kernels::@k}
  func.func @wrong_count(%x: memref<8x64xbf16>) {
    // expected-error @+1 {{@k_one takes 1 operands and returns 0 values, but kernel @k has 2 operands (a launcher takes them in order and returns nothing)}}
    call @k_one(%x) : (memref<8x64xbf16>) -> ()
    return
  }
  func.func private @k_read(memref<8x64xbf16>, memref<8x64xf32> {bufferization.access = "read"}) attributes {fp8.kernel = @fp8_kernels::@k}
  func.func @wrong_access(%x: memref<8x64xbf16>, %y: memref<8x64xf32>) {
    // expected-error @+1 {{launcher argument 1 is marked "read" but kernel operand 'y' is an output}}
    call @k_read(%x, %y) : (memref<8x64xbf16>, memref<8x64xf32>) -> ()
    return
  }
  func.func private @k_rows(memref<8x64xbf16>, memref<16x64xf32>) attributes {fp8.kernel = @fp8_kernels::@k}
  func.func @two_values(%x: memref<8x64xbf16>, %y: memref<16x64xf32>) {
    // expected-error @+1 {{kernel symbol R is 8 by one operand but 16 by 'y'}}
    call @k_rows(%x, %y) : (memref<8x64xbf16>, memref<16x64xf32>) -> ()
    return
  }
  func.func private @k_dyn(memref<?x64xbf16>, memref<?x64xf32>) attributes {fp8.kernel = @fp8_kernels::@k}
  func.func @symbol_and_size(%x: memref<?x64xbf16>) {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %n = memref.dim %x, %c0 : memref<?x64xbf16>
    %m = arith.muli %n, %c2 : index
    %y = memref.alloc(%m) : memref<?x64xf32>
    // expected-error @+1 {{kernel symbol R is arg0_0 by one operand but arg0_0*2 by 'y'}}
    call @k_dyn(%x, %y) : (memref<?x64xbf16>, memref<?x64xf32>) -> ()
    return
  }
}

// -----

// An argument a kernel reads in another layout than its type's is passed in
// that layout; an extent of it that no other operand gives is an error.
module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">, gpu.container_module} {
  gpu.module @fp8_kernels {
    gpu.func @k() kernel attributes {fp8.kernel_metadata = {operands = [
        {name = "s", dtype = "f32", shape = [4, "roundup(R, 4)"], role = "input"}]}} {
      gpu.return
    }
  }
  func.func private @k_launch_into(memref<?x4xf32>) attributes {fp8.kernel = @fp8_kernels::@k}
  func.func @padded(%s: memref<?x4xf32>) {
    // expected-error @+1 {{argument 'arg0' is read in the kernel layout [4, roundup(R, 4)], whose extent roundup(R, 4) no other operand gives}}
    call @k_launch_into(%s) : (memref<?x4xf32>) -> ()
    return
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">, gpu.container_module} {
  gpu.module @fp8_kernels {
    // expected-error @+1 {{kernel @bare has no 'fp8.kernel_metadata' dictionary: the host program cannot bind its operands}}
    gpu.func @bare() kernel {
      gpu.return
    }
  }
  func.func private @bare_launch_into() attributes {fp8.kernel = @fp8_kernels::@bare}
  func.func @no_metadata() {
    call @bare_launch_into() : () -> ()
    return
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">, gpu.container_module} {
  gpu.module @fp8_kernels {
    // expected-error @+1 {{kernel @partial metadata 'operands[0]' has no 'role'}}
    gpu.func @partial() kernel attributes {fp8.kernel_metadata = {operands = [
        {name = "x", dtype = "f32", shape = [4]}]}} {
      gpu.return
    }
  }
  func.func private @partial_launch_into(memref<4xf32>) attributes {fp8.kernel = @fp8_kernels::@partial}
  func.func @partial_operand(%x: memref<4xf32>) {
    call @partial_launch_into(%x) : (memref<4xf32>) -> ()
    return
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">, gpu.container_module} {
  gpu.module @fp8_kernels {
    // expected-error @+1 {{kernel @none metadata has no operands: the host program cannot bind its operands}}
    gpu.func @none() kernel attributes {fp8.kernel_metadata = {name = "none"}} {
      gpu.return
    }
  }
  func.func private @none_launch_into() attributes {fp8.kernel = @fp8_kernels::@none}
  func.func @no_operands() {
    call @none_launch_into() : () -> ()
    return
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  func.func private @gone() attributes {fp8.kernel = @fp8_kernels::@gone}
  func.func @no_kernel() {
    // expected-error @+1 {{launcher @gone names @fp8_kernels::@gone, which is not a kernel of the module}}
    call @gone() : () -> ()
    return
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'fp8.amax' has no kernel: the runtime cannot run it}}
    %a = fp8.amax %x : tensor<4xf32> -> tensor<f32>
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  // expected-error @+1 {{host program of @branches: the function has several blocks: a host program is a sequence of steps}}
  func.func @branches(%x: memref<4xf32>) {
    cf.br ^next
  ^next:
    return
  }
}

// -----

// expected-error @+1 {{no fp8.target on the module: run fp8-attach-target{chip=...} (fp8-to-ptx does) first}}
module {
  func.func @f() {
    return
  }
}

// -----

// A strided copy (fp8-lower-collectives' copy2d declarations) names its
// whole geometry, fits both tensors and keeps the element type.
module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  func.func private @fp8_copy2d(memref<4x8xf32>, memref<4x4xf32>) attributes {fp8.collective = {kind = "copy2d", rows = 4 : i64, row_elements = 4 : i64, source_offset = 0 : i64, source_pitch = 8 : i64, target_offset = 0 : i64}}
  func.func @copy_without_pitch(%x: memref<4x8xf32>) -> memref<4x4xf32> {
    %y = memref.alloc() : memref<4x4xf32>
    // expected-error @+1 {{@fp8_copy2d is a malformed strided copy: {kind = "copy2d"}}
    call @fp8_copy2d(%x, %y) : (memref<4x8xf32>, memref<4x4xf32>) -> ()
    return %y : memref<4x4xf32>
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  func.func private @fp8_copy2d(memref<4x8xf32>, memref<4x4xf32>) attributes {fp8.collective = {kind = "copy2d", rows = 5 : i64, row_elements = 4 : i64, source_offset = 0 : i64, source_pitch = 8 : i64, target_offset = 0 : i64, target_pitch = 4 : i64}}
  func.func @copy_past_the_end(%x: memref<4x8xf32>) -> memref<4x4xf32> {
    %y = memref.alloc() : memref<4x4xf32>
    // expected-error @+1 {{target_pitch = 4 : i64} does not fit [4, 8] and [4, 4]}}
    call @fp8_copy2d(%x, %y) : (memref<4x8xf32>, memref<4x4xf32>) -> ()
    return %y : memref<4x4xf32>
  }
}

// -----

module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
  func.func private @fp8_copy2d(memref<4x8xf32>, memref<4x4xf16>) attributes {fp8.collective = {kind = "copy2d", rows = 4 : i64, row_elements = 4 : i64, source_offset = 0 : i64, source_pitch = 8 : i64, target_offset = 0 : i64, target_pitch = 4 : i64}}
  func.func @copy_between_types(%x: memref<4x8xf32>) -> memref<4x4xf16> {
    %y = memref.alloc() : memref<4x4xf16>
    // expected-error @+1 {{the strided copy's input and output have different element types}}
    call @fp8_copy2d(%x, %y) : (memref<4x8xf32>, memref<4x4xf16>) -> ()
    return %y : memref<4x4xf16>
  }
}

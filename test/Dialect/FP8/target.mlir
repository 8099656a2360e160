// RUN: fp8-opt %s | FileCheck %s
// RUN: fp8-opt %s -mlir-print-op-generic | fp8-opt | FileCheck %s
// RUN: fp8-opt %s -emit-bytecode | fp8-opt | FileCheck %s

// The target of a module: every parameter prints back.
// CHECK: module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 114, max_shared_memory_per_block = 200000, ptx_features = "+ptx83">}
module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 114, max_shared_memory_per_block = 200000, ptx_features = "+ptx83">} {
  func.func private @f()
}

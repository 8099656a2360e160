// RUN: fp8-opt %s -fp8-attach-target=chip=sm_90a | FileCheck %s --check-prefix=SM90
// RUN: fp8-opt %s -fp8-attach-target=chip=sm_100a | FileCheck %s --check-prefix=SM100
// RUN: fp8-opt %s -fp8-attach-target="chip=sm_90a sm-count=114" | FileCheck %s --check-prefix=PCIE

// The attribute round-trips, and a module that has it keeps it: without a
// chip, or with the same one, the pass changes nothing.
// RUN: fp8-opt %s -fp8-attach-target=chip=sm_100a | fp8-opt -fp8-attach-target | FileCheck %s --check-prefix=SM100
// RUN: fp8-opt %s -fp8-attach-target="chip=sm_90a sm-count=114" \
// RUN:   | fp8-opt -fp8-attach-target=chip=sm_90a | FileCheck %s --check-prefix=PCIE

// The chip's limits: H100/H200 SXM have 132 SMs, a B200 148; both take
// 227 KiB of dynamic shared memory per block.
// SM90: module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">}
// SM100: module attributes {fp8.target = #fp8.target<chip = "sm_100a", sm_count = 148, max_shared_memory_per_block = 232448, ptx_features = "+ptx88">}
// PCIE: module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 114, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">}
func.func private @f()

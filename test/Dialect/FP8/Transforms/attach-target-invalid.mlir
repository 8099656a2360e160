// RUN: fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_90a -verify-diagnostics | FileCheck %s

// One chip, worded once for every tool, API and pass.
// RUN: not fp8-opt %s -split-input-file -fp8-attach-target=chip=sm_80 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: unknown chip 'sm_80': expected one of sm_90a, sm_100a
// UNKNOWN-NOT: see current operation

// No chip given and none on the module (the last case).
// RUN: not fp8-opt %s -split-input-file -fp8-attach-target 2>&1 | FileCheck %s --check-prefix=NO-CHIP
// NO-CHIP: error: no target chip: the module has no fp8.target and no chip was given (expected one of sm_90a, sm_100a)

// An SM count other than the module's (the second case), a negative one.
// RUN: not fp8-opt %s -split-input-file -fp8-attach-target="chip=sm_90a sm-count=100" 2>&1 | FileCheck %s --check-prefix=SM-COUNT
// SM-COUNT: error: cannot attach sm-count=100: the module is already compiled for #fp8.target<chip = "sm_90a", sm_count = 114, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">
// RUN: not fp8-opt %s -split-input-file -fp8-attach-target="chip=sm_90a sm-count=-2" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: expected sm-count >= 1 (or 0 for sm_90a's 132), got -2

// A module is compiled for one chip.
// expected-error @+1 {{cannot attach chip 'sm_90a': the module is already compiled for #fp8.target<chip = "sm_100a", sm_count = 148, max_shared_memory_per_block = 232448, ptx_features = "+ptx88">}}
module attributes {fp8.target = #fp8.target<chip = "sm_100a", sm_count = 148, max_shared_memory_per_block = 232448, ptx_features = "+ptx88">} {
}

// -----

// The same chip: the module's target, with its own SM count, stays.
// CHECK: module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 114, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">}
module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 114, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
}

// -----

// CHECK: module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">}
func.func private @f()

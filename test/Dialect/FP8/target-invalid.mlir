// RUN: fp8-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{unknown chip 'sm_89': expected one of sm_90a, sm_100a}}
module attributes {fp8.target = #fp8.target<chip = "sm_89", sm_count = 128, max_shared_memory_per_block = 101376, ptx_features = "+ptx80">} {
}

// -----

// expected-error @+1 {{expected sm_count >= 1, got 0}}
module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 0, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">} {
}

// -----

// expected-error @+1 {{expected max_shared_memory_per_block in [1, 232448] (sm_100a's opt-in maximum), got 233472}}
module attributes {fp8.target = #fp8.target<chip = "sm_100a", sm_count = 148, max_shared_memory_per_block = 233472, ptx_features = "+ptx88">} {
}

// -----

// expected-error @+1 {{expected ptx_features, e.g. "+ptx80" for sm_90a}}
module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "">} {
}

// -----

// expected-error @+1 {{'fp8.target' belongs on a builtin.module, not on 'func.func'}}
func.func private @on_a_function() attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">}

// -----

// expected-error @+1 {{'fp8.target' must be an #fp8.target attribute, got "sm_90a"}}
module attributes {fp8.target = "sm_90a"} {
}

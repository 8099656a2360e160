// RUN: not fp8-opt %s -fp8-verify-target=chip=sm_80 2>&1 | FileCheck %s
// RUN: not fp8-opt %s -fp8-verify-target=chip=sm_90 2>&1 | FileCheck %s

// CHECK: error: unknown chip '{{sm_80|sm_90}}': expected one of sm_90a, sm_100a
func.func @f() {
  return
}

// The kernel metadata + PTX the tests share: the example from the metadata
// spec (an sm_90a FP8 GEMM, N = 7168, K = 2048, persistent grid), plus
// helpers to derive variants by text replacement.
#ifndef FP8RT_UNITTESTS_TESTKERNELS_H
#define FP8RT_UNITTESTS_TESTKERNELS_H

#include "fp8rt/fp8rt.h"
#include "fp8schema/Expr.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace fp8rt::testing {

inline const char *const kExampleJson = R"json({
  "format": "fp8-mlir-kernel",
  "version": 1,
  "name": "gemm_tn_e4m3_bf16_n7168_k2048",
  "entry": "gemm_tn_e4m3_bf16_n7168_k2048",
  "chip": "sm_90a",
  "ptx": "gemm_tn_e4m3_bf16_n7168_k2048.ptx",
  "block": [384, 1, 1],
  "cluster": [1, 1, 1],
  "dynamic_shared_memory_bytes": 197632,
  "grid": {"kind": "persistent", "tile_m": 128, "tile_n": 256},
  "operands": [
    {"name": "a", "dtype": "e4m3", "shape": ["M", 2048], "role": "input"},
    {"name": "b", "dtype": "e4m3", "shape": [7168, 2048], "role": "input"},
    {"name": "a_scale_inv", "dtype": "f32", "shape": [], "role": "input"},
    {"name": "b_scale_inv", "dtype": "f32", "shape": [], "role": "input"},
    {"name": "bias", "dtype": "bf16", "shape": [7168], "role": "input", "optional": true},
    {"name": "d", "dtype": "bf16", "shape": ["M", 7168], "role": "output"}
  ],
  "tensor_maps": [
    {"name": "tma_a", "operand": "a", "dtype": "e4m3", "rank": 2,
     "dims": [2048, "M"], "strides_bytes": [2048], "box": [128, 128],
     "element_strides": [1, 1], "interleave": "none", "swizzle": "128B",
     "l2_promotion": "256B", "oob_fill": "zero"}
  ],
  "params": [
    {"name": "tma_a", "kind": "tensor_map", "tensor_map": "tma_a", "passing": "grid_constant"},
    {"name": "a_scale_inv", "kind": "pointer", "operand": "a_scale_inv"},
    {"name": "bias", "kind": "pointer", "operand": "bias"},
    {"name": "d", "kind": "pointer", "operand": "d"},
    {"name": "m", "kind": "i32", "value": "M"}
  ]
})json";

// The PTX signature matching kExampleJson's params.
inline const char *const kExamplePtx = R"ptx(//
// Generated for the fp8rt unit tests
//
.version 8.4
.target sm_90a
.address_size 64

	// .globl	gemm_tn_e4m3_bf16_n7168_k2048
.visible .entry gemm_tn_e4m3_bf16_n7168_k2048(
	.param .align 64 .b8 gemm_tn_e4m3_bf16_n7168_k2048_param_0[128],
	.param .u64 .ptr .global .align 4 gemm_tn_e4m3_bf16_n7168_k2048_param_1,
	.param .u64 .ptr .global .align 2 gemm_tn_e4m3_bf16_n7168_k2048_param_2,
	.param .u64 .ptr .global .align 16 gemm_tn_e4m3_bf16_n7168_k2048_param_3,
	.param .u32 gemm_tn_e4m3_bf16_n7168_k2048_param_4 /* m */
)
.maxntid 384, 1, 1
{
	ret;
}
)ptx";

// `text` with the first occurrence of `from` replaced by `to`; a test
// failure if `from` is absent (so variants cannot silently stop applying).
inline std::string replaced(std::string text, const std::string &from,
                            const std::string &to) {
  size_t at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "test bug: \"" << from << "\" not found";
    return text;
  }
  return text.replace(at, from.size(), to);
}

// The value of an expression of one symbol when the symbol is `value`.
inline int64_t evaluateFor(const fp8schema::Expr &e, int64_t value) {
  int64_t out = 0;
  std::string error;
  auto lookup = [&](const std::string &, int64_t &v) {
    return v = value, true;
  };
  EXPECT_TRUE(e.evaluate(lookup, out, error)) << error;
  return out;
}

inline fp8rt_tensor makeTensor(const char *name, uintptr_t data,
                               fp8rt_dtype dtype,
                               std::initializer_list<int64_t> shape) {
  fp8rt_tensor t{};
  t.name = name;
  t.data = reinterpret_cast<void *>(data);
  t.dtype = dtype;
  t.rank = static_cast<int>(shape.size());
  int i = 0;
  for (int64_t extent : shape)
    t.shape[i++] = extent;
  return t;
}

// Fake device addresses of the example's operands.
constexpr uintptr_t kA = 0x10000000, kB = 0x20000000, kAScale = 0x30000000,
                    kBScale = 0x30000100, kBias = 0x40000000, kD = 0x50000000;

// Operands of the example kernel for M rows (no bias).
inline std::vector<fp8rt_tensor> exampleOperands(int64_t m) {
  return {makeTensor("a", kA, FP8RT_E4M3, {m, 2048}),
          makeTensor("b", kB, FP8RT_E4M3, {7168, 2048}),
          makeTensor("a_scale_inv", kAScale, FP8RT_F32, {}),
          makeTensor("b_scale_inv", kBScale, FP8RT_F32, {}),
          makeTensor("d", kD, FP8RT_BF16, {m, 7168})};
}

} // namespace fp8rt::testing

#endif // FP8RT_UNITTESTS_TESTKERNELS_H

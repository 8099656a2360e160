// A module directory for the tests: module.json with two functions and the
// three kernels they launch, written to a temporary directory.
//
//   step(x: bf16 [x_0, 2048], w: e4m3 [7168, 2048], w_scale_inv: f32 [],
//        history: f32 [4] written)
//       -> (y: bf16 [x_0, 7168], history_out = history)
//     0 fill amax 0            (buffer, 4 bytes at 0)
//     1 amax(x, amax)          R = x_0
//     2 cast(x, amax, q, q_scale)
//     3 gemm(q, w, q_scale, w_scale_inv, y)   M = x_0
//     4 fill history 0
//   rows(a: bf16 [n, 2048], b: bf16 [n, 2048]) -> ()
//     amax of a, then of b, into one buffer.
#ifndef FP8RT_UNITTESTS_TESTMODULE_H
#define FP8RT_UNITTESTS_TESTMODULE_H

#include "TestKernels.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fp8rt::testing {

// PTX whose entry takes `params` in order: ".u64", ".u32" or "map" (a
// 128-byte grid-constant tensor map).
inline std::string ptxWithParams(const std::string &entry,
                                 const std::vector<std::string> &params) {
  std::string out = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                    ".visible .entry " +
                    entry + "(\n";
  for (size_t i = 0; i < params.size(); ++i) {
    std::string name = entry + "_param_" + std::to_string(i);
    out += params[i] == "map" ? "\t.param .align 64 .b8 " + name + "[128]"
                              : "\t.param " + params[i] + " " + name;
    out += i + 1 < params.size() ? ",\n" : "\n";
  }
  return out + ")\n{\n\tret;\n}\n";
}

// The amax of x [R, 2048] into a zeroed scalar.
inline const char *const kAmaxJson = R"json({
  "format": "fp8-mlir-kernel", "version": 1,
  "name": "amax", "entry": "amax", "chip": "sm_90a", "kind": "amax",
  "ptx": "amax.ptx", "block": [256, 1, 1], "dynamic_shared_memory_bytes": 0,
  "grid": {"kind": "fixed", "dims": [132, 1, 1]},
  "operands": [
    {"name": "x", "dtype": "bf16", "shape": ["R", 2048], "role": "input", "alignment": 16},
    {"name": "amax", "dtype": "f32", "shape": [], "role": "output", "alignment": 4}
  ],
  "params": [
    {"name": "x", "kind": "pointer", "operand": "x"},
    {"name": "amax", "kind": "pointer", "operand": "amax"},
    {"name": "r", "kind": "i32", "value": "R"}
  ]
})json";

// x [R, 2048] cast to FP8 with the scale of its amax.
inline const char *const kCastJson = R"json({
  "format": "fp8-mlir-kernel", "version": 1,
  "name": "cast", "entry": "cast", "chip": "sm_90a", "kind": "quantize",
  "ptx": "cast.ptx", "block": [256, 1, 1], "dynamic_shared_memory_bytes": 0,
  "grid": {"kind": "tiles", "tile_m": 128, "tile_n": 128, "operand": "q"},
  "operands": [
    {"name": "x", "dtype": "bf16", "shape": ["R", 2048], "role": "input", "alignment": 16},
    {"name": "amax", "dtype": "f32", "shape": [], "role": "input", "alignment": 4},
    {"name": "q", "dtype": "e4m3", "shape": ["R", 2048], "role": "output", "alignment": 16},
    {"name": "q_scale_inv", "dtype": "f32", "shape": [], "role": "output", "alignment": 4}
  ],
  "params": [
    {"name": "x", "kind": "pointer", "operand": "x"},
    {"name": "amax", "kind": "pointer", "operand": "amax"},
    {"name": "q", "kind": "pointer", "operand": "q"},
    {"name": "q_scale_inv", "kind": "pointer", "operand": "q_scale_inv"},
    {"name": "r", "kind": "i32", "value": "R"}
  ]
})json";

inline const char *const kGemmName = "gemm_tn_e4m3_bf16_n7168_k2048";

inline const char *const kModuleJson = R"json({
  "format": "fp8-mlir-module", "version": 1, "chip": "sm_90a",
  "kernels": ["amax", "cast", "gemm_tn_e4m3_bf16_n7168_k2048"],
  "functions": [
    {
      "name": "step",
      "symbols": [{"name": "x_0", "argument": "x", "dim": 0}],
      "arguments": [
        {"name": "x", "dtype": "bf16", "shape": ["x_0", 2048], "alignment": 16},
        {"name": "w", "dtype": "e4m3", "shape": [7168, 2048], "alignment": 1},
        {"name": "w_scale_inv", "dtype": "f32", "shape": [], "alignment": 4},
        {"name": "history", "dtype": "f32", "shape": [4], "alignment": 4, "written": true}
      ],
      "results": [
        {"name": "y", "dtype": "bf16", "shape": ["x_0", 7168], "alignment": 2},
        {"name": "history_out", "dtype": "f32", "shape": [4], "alignment": 4, "alias_of": "history"}
      ],
      "buffers": [
        {"name": "amax", "dtype": "f32", "shape": [], "bytes": 4, "alignment": 256, "offset": 0},
        {"name": "q", "dtype": "e4m3", "shape": ["x_0", 2048], "bytes": "x_0*2048", "alignment": 256, "offset": 256},
        {"name": "q_scale", "dtype": "f32", "shape": [], "bytes": 4, "alignment": 256, "offset": "roundup(x_0*2048, 256) + 256"}
      ],
      "workspace_bytes": "roundup(x_0*2048, 256) + 512",
      "steps": [
        {"kind": "fill", "target": "amax", "byte": 0},
        {"kind": "launch", "kernel": "amax", "operands": {"x": "x", "amax": "amax"}, "symbols": {"R": "x_0"}},
        {"kind": "launch", "kernel": "cast",
         "operands": {"x": "x", "amax": "amax", "q": "q", "q_scale_inv": "q_scale"}, "symbols": {"R": "x_0"}},
        {"kind": "launch", "kernel": "gemm_tn_e4m3_bf16_n7168_k2048",
         "operands": {"a": "q", "b": "w", "a_scale_inv": "q_scale", "b_scale_inv": "w_scale_inv", "d": "y"},
         "symbols": {"M": "x_0"}},
        {"kind": "fill", "target": "history", "byte": 0}
      ]
    },
    {
      "name": "rows",
      "symbols": [{"name": "n", "argument": "a", "dim": 0}],
      "arguments": [
        {"name": "a", "dtype": "bf16", "shape": ["n", 2048], "alignment": 16},
        {"name": "b", "dtype": "bf16", "shape": ["n", 2048], "alignment": 16}
      ],
      "results": [],
      "buffers": [
        {"name": "m", "dtype": "f32", "shape": [], "bytes": 4, "alignment": 256, "offset": 0}
      ],
      "workspace_bytes": 256,
      "steps": [
        {"kind": "fill", "target": "m", "byte": 0},
        {"kind": "launch", "kernel": "amax", "operands": {"x": "a", "amax": "m"}, "symbols": {"R": "n"}},
        {"kind": "launch", "kernel": "amax", "operands": {"x": "b", "amax": "m"}, "symbols": {"R": "n"}}
      ]
    }
  ]
})json";

// A temporary directory holding kModuleJson (or a variant) and its kernels.
class ModuleDirectory {
public:
  ModuleDirectory() {
    char pattern[] = "/tmp/fp8rt-module-XXXXXX";
    if (mkdtemp(pattern))
      path_ = pattern;
    write("amax.json", kAmaxJson);
    write("amax.ptx", ptxWithParams("amax", {".u64", ".u64", ".u32"}));
    write("cast.json", kCastJson);
    write("cast.ptx",
          ptxWithParams("cast", {".u64", ".u64", ".u64", ".u64", ".u32"}));
    write(std::string(kGemmName) + ".json", kExampleJson);
    write(std::string(kGemmName) + ".ptx", kExamplePtx);
    write("module.json", kModuleJson);
  }
  ~ModuleDirectory() { std::filesystem::remove_all(path_); }
  ModuleDirectory(const ModuleDirectory &) = delete;
  ModuleDirectory &operator=(const ModuleDirectory &) = delete;

  void write(const std::string &name, const std::string &contents) {
    std::ofstream(path_ / name, std::ios::binary) << contents;
  }
  std::string path() const { return path_.string(); }

private:
  std::filesystem::path path_;
};

} // namespace fp8rt::testing

#endif // FP8RT_UNITTESTS_TESTMODULE_H

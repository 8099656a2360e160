# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FP8-MLIR"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fp8_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "fp8-capi-test.c"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%fp8_src_root", config.fp8_src_root))
config.substitutions.append(("%fp8_obj_root", config.fp8_obj_root))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.fp8_tools_dir, config.llvm_tools_dir]
tools = [ToolSubst("fp8-opt", unresolved="fatal"),
         ToolSubst("fp8-compile", unresolved="fatal"),
         ToolSubst("fp8-capi-test", unresolved="fatal")]
llvm_config.add_tool_substitutions(tools, tool_dirs)

if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))

# The plugin for stock mlir-opt (test/Plugin) and Debian's mlir-opt itself.
config.substitutions.append(("%fp8_plugin",
                             os.path.join(config.fp8_obj_root, "lib", "FP8Plugin.so")))
config.substitutions.append(("%mlir_opt", os.path.join(config.llvm_tools_dir, "mlir-opt")))
config.substitutions.append(("%cmake", config.cmake))
config.substitutions.append(("%generator", config.cmake_generator))
import shutil
config.substitutions.append(("%ccache", shutil.which("ccache") or ""))

# A sanitizer build (scripts/sanitize.sh) instruments this project's
# libraries; programs that are not instrumented cannot load them (stock
# mlir-opt with the plugin, /usr/bin/python3 with libFP8CAPI.so), and the
# embedding example does not build against them. Those tests say
# `UNSUPPORTED: sanitizers` and run in the normal build.
if config.llvm_use_sanitizer:
    config.available_features.add("sanitizers")

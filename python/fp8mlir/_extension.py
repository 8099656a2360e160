"""Builds and loads the C++ kernels of fp8mlir's PyTorch operators
(``csrc/fp8mlir_torch.cpp``) with ``torch.utils.cpp_extension``.

The first load compiles it (about a minute) into torch's extension
directory (``$TORCH_EXTENSIONS_DIR``, default ``~/.cache/torch_extensions``);
later loads reuse the build while the source and flags are unchanged.

Environment:
  FP8MLIR_TORCH_EXTENSION=0   do not build or load it (the operators then
                              run their Python implementations)
  CXX                         the compiler; when unset and /usr/bin/g++
                              exists, that one (a toolchain that links
                              libstdc++ statically into shared objects
                              gives extensions that crash in the first call)
  FP8MLIR_TORCH_EXTENSION_VERBOSE=1   show the build
"""

import ctypes
import os
import warnings
from pathlib import Path

EXTENSION_ENV = "FP8MLIR_TORCH_EXTENSION"
NAME = "fp8mlir_torch_ext"
ABI_VERSION = 2  # fp8mlir_torch_abi_version() of csrc/fp8mlir_torch.cpp

_PACKAGE = Path(__file__).resolve().parent
SOURCE = _PACKAGE / "csrc" / "fp8mlir_torch.cpp"
# fp8rt/fp8rt.h: the source tree's runtime/include, or <prefix>/include of
# an install (the package is <prefix>/python/fp8mlir).
_INCLUDE_CANDIDATES = (_PACKAGE.parents[1] / "runtime" / "include",
                       _PACKAGE.parents[1] / "include")


class ExtensionUnavailable(RuntimeError):
    """The C++ extension could not be built or loaded."""


def runtime_include_dir():
    for candidate in _INCLUDE_CANDIDATES:
        if (candidate / "fp8rt" / "fp8rt.h").is_file():
            return candidate
    raise ExtensionUnavailable(
        "fp8rt/fp8rt.h not found in " + ", ".join(map(str, _INCLUDE_CANDIDATES)))


def enabled():
    return os.environ.get(EXTENSION_ENV, "1") != "0"


def build():
    """Compiles (when needed) and loads the extension into the process;
    returns its path. Raises ExtensionUnavailable."""
    if not enabled():
        raise ExtensionUnavailable(f"disabled by {EXTENSION_ENV}=0")
    try:
        from torch.utils import cpp_extension
    except ImportError as error:
        raise ExtensionUnavailable(f"torch.utils.cpp_extension: {error}") from error
    default_cxx = "CXX" not in os.environ and Path("/usr/bin/g++").is_file()
    if default_cxx:  # for this build only
        os.environ["CXX"] = "/usr/bin/g++"
    try:
        path = cpp_extension.load(
            name=NAME,
            sources=[str(SOURCE)],
            extra_include_paths=[str(runtime_include_dir())],
            extra_cflags=["-O2"],
            extra_ldflags=["-l:libstdc++.so.6"],
            with_cuda=True,
            is_python_module=False,
            verbose=os.environ.get("FP8MLIR_TORCH_EXTENSION_VERBOSE") == "1")
    except Exception as error:  # a compiler error, no CUDA toolkit, ...
        raise ExtensionUnavailable(f"building {SOURCE.name} failed: {error}") from error
    finally:
        if default_cxx:
            del os.environ["CXX"]
    return str(path)


class Extension:
    """The loaded extension's C entry points."""

    def __init__(self, path):
        self.path = path
        self.lib = ctypes.CDLL(path)
        version = self.lib.fp8mlir_torch_abi_version()
        if version != ABI_VERSION:
            raise ExtensionUnavailable(
                f"{path} has ABI version {version}, this package {ABI_VERSION}: "
                f"remove the stale build")
        self.lib.fp8mlir_torch_init.argtypes = [ctypes.c_void_p] * 5
        self.lib.fp8mlir_torch_init.restype = None
        self.lib.fp8mlir_torch_init_functions.argtypes = [ctypes.c_void_p]
        self.lib.fp8mlir_torch_init_functions.restype = None
        self.lib.fp8mlir_torch_register_result_plan.argtypes = [
            ctypes.c_int32] + [ctypes.c_void_p] * 4
        self.lib.fp8mlir_torch_register_result_plan.restype = ctypes.c_int64
        self.lib.fp8mlir_torch_forget_kernels.restype = None
        self.function_call = None  # the fp8rt_function_call it calls (address)

    def init(self, runtime, resolver):
        """Hands the extension the runtime's functions (`runtime`: the
        ctypes CDLL of libfp8rt) and the kernel resolver (a ctypes callback,
        which the caller keeps alive)."""
        def address(function):
            return ctypes.cast(function, ctypes.c_void_p).value
        self.lib.fp8mlir_torch_init(
            address(runtime.fp8rt_launch_ordered), address(runtime.fp8rt_last_error),
            address(runtime.fp8rt_kernel_num_operands),
            address(runtime.fp8rt_kernel_operand_name), address(resolver))
        self.function_call = address(runtime.fp8rt_function_call)
        self.lib.fp8mlir_torch_init_functions(self.function_call)

    def register_result_plan(self, dtypes, shapes, aliased, max_rank):
        """Registers the results of a module call plan (fp8rt dtype codes,
        shapes, whether each is an argument updated in place); returns its
        id for ``fp8mlir::_call_planned``, or None when the extension
        cannot allocate one of them."""
        n = len(dtypes)
        flat = [0] * (n * max_rank)
        for i, shape in enumerate(shapes):
            flat[i * max_rank:i * max_rank + len(shape)] = shape
        arrays = [(ctypes.c_int32 * max(n, 1))(*dtypes),
                  (ctypes.c_int32 * max(n, 1))(*(len(s) for s in shapes)),
                  (ctypes.c_int64 * max(len(flat), 1))(*flat),
                  (ctypes.c_int32 * max(n, 1))(*(int(a) for a in aliased))]
        plan = self.lib.fp8mlir_torch_register_result_plan(
            n, *(ctypes.cast(a, ctypes.c_void_p) for a in arrays))
        return None if plan < 0 else plan

    def forget_kernels(self):
        self.lib.fp8mlir_torch_forget_kernels()


def load():
    """The extension, or None (with a warning saying why) when it cannot be
    built or loaded, or is disabled."""
    if not enabled():
        return None
    try:
        return Extension(build())
    except (ExtensionUnavailable, OSError) as error:
        warnings.warn(f"fp8mlir: the C++ operators are unavailable ({error}); "
                      f"using the Python implementations, which cost more host "
                      f"time per call", RuntimeWarning, stacklevel=3)
        return None

"""ctypes binding of the compiler's C API, ``libFP8CAPI.so`` (include/FP8-c).

Found at $FP8MLIR_CAPI_LIBRARY, else next to the package in an install
(``<prefix>/lib``), else in the source tree's ``build/lib``. Only
``fp8mlir.compile`` and the numerics cross-check need it: running kernels
needs the runtime alone.
"""

import ctypes
import functools
import os
from pathlib import Path

LIBRARY_ENV = "FP8MLIR_CAPI_LIBRARY"
_LIBRARY_NAME = "libFP8CAPI.so"
_PACKAGE_DIR = Path(__file__).resolve().parent


class StringRef(ctypes.Structure):
    """MlirStringRef."""
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]

    @classmethod
    def of(cls, data: bytes):
        # The caller keeps `data` alive for the call.
        return cls(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))

    def text(self):
        return ctypes.string_at(self.data, self.length).decode("utf-8", "replace") \
            if self.length else ""


def _handle(name):
    return type(name, (ctypes.Structure,), {"_fields_": [("ptr", ctypes.c_void_p)]})


MlirContext = _handle("MlirContext")
MlirDialectRegistry = _handle("MlirDialectRegistry")
CompileResult = _handle("Fp8CompileResult")
QuantizedTensor = _handle("Fp8QuantizedTensor")


class CompileOptions(ctypes.Structure):
    _fields_ = [("chip", StringRef), ("optLevel", ctypes.c_uint),
                ("defaultRecipe", StringRef), ("gemmConfig", StringRef)]


class NumericsGranularity(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("tileRows", ctypes.c_int64),
                ("tileCols", ctypes.c_int64)]


class NumericsScaleRule(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("scale", ctypes.c_float),
                ("epsilon", ctypes.c_float), ("powerOfTwo", ctypes.c_bool),
                ("blockKind", ctypes.c_int), ("amaxClamp", ctypes.c_float),
                ("ue8m0Rounding", ctypes.c_int)]


# name: (restype, argtypes)
_SIGNATURES = {
    "mlirDialectRegistryCreate": (MlirDialectRegistry, []),
    "mlirDialectRegistryDestroy": (None, [MlirDialectRegistry]),
    "mlirContextCreateWithRegistry": (MlirContext, [MlirDialectRegistry, ctypes.c_bool]),
    "mlirContextDestroy": (None, [MlirContext]),
    "fp8RegisterCompilerDialects": (None, [MlirDialectRegistry]),
    "fp8GetNumSupportedChips": (ctypes.c_ssize_t, []),
    "fp8GetSupportedChipName": (StringRef, [ctypes.c_ssize_t]),
    "fp8CompileSource": (CompileResult, [MlirContext, StringRef, StringRef,
                                         ctypes.POINTER(CompileOptions)]),
    "fp8CompileResultSucceeded": (ctypes.c_bool, [CompileResult]),
    "fp8CompileResultGetNumKernels": (ctypes.c_ssize_t, [CompileResult]),
    "fp8CompileResultGetKernelName": (StringRef, [CompileResult, ctypes.c_ssize_t]),
    "fp8CompileResultGetKernelPTX": (StringRef, [CompileResult, ctypes.c_ssize_t]),
    "fp8CompileResultGetKernelMetadata": (StringRef, [CompileResult, ctypes.c_ssize_t]),
    "fp8CompileResultGetNumDiagnostics": (ctypes.c_ssize_t, [CompileResult]),
    "fp8CompileResultGetDiagnosticSeverity": (ctypes.c_int, [CompileResult, ctypes.c_ssize_t]),
    "fp8CompileResultGetDiagnosticLocation": (StringRef, [CompileResult, ctypes.c_ssize_t]),
    "fp8CompileResultGetDiagnosticMessage": (StringRef, [CompileResult, ctypes.c_ssize_t]),
    "fp8CompileResultGetDiagnosticText": (StringRef, [CompileResult, ctypes.c_ssize_t]),
    "fp8CompileResultDestroy": (None, [CompileResult]),
    "fp8NumericsQuantize": (QuantizedTensor, [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                              ctypes.c_int, NumericsGranularity,
                                              NumericsScaleRule, ctypes.c_bool]),
    "fp8QuantizedTensorGetError": (StringRef, [QuantizedTensor]),
    "fp8QuantizedTensorGetRows": (ctypes.c_int64, [QuantizedTensor]),
    "fp8QuantizedTensorGetCols": (ctypes.c_int64, [QuantizedTensor]),
    "fp8QuantizedTensorGetData": (ctypes.c_void_p, [QuantizedTensor]),
    "fp8QuantizedTensorGetScaleRows": (ctypes.c_int64, [QuantizedTensor]),
    "fp8QuantizedTensorGetScaleCols": (ctypes.c_int64, [QuantizedTensor]),
    "fp8QuantizedTensorGetScaleInv": (ctypes.c_void_p, [QuantizedTensor]),
    "fp8QuantizedTensorGetScaleE8M0": (ctypes.c_void_p, [QuantizedTensor]),
    "fp8QuantizedTensorGetAmax": (ctypes.c_float, [QuantizedTensor]),
    "fp8QuantizedTensorDestroy": (None, [QuantizedTensor]),
    "fp8NumericsEncode": (None, [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]),
    "fp8NumericsDecode": (None, [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]),
    "fp8NumericsHistoryAmax": (ctypes.c_float, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]),
    "fp8NumericsDelayedScalingScale": (ctypes.c_float, [ctypes.c_float, ctypes.c_float,
                                                        ctypes.c_int, ctypes.c_int]),
    "fp8CompileResultGetModuleJSON": (StringRef, [CompileResult]),
}

# MlirDiagnosticSeverity
SEVERITIES = {0: "error", 1: "warning", 2: "note", 3: "remark"}


def find_library():
    """Path of libFP8CAPI.so, or None."""
    override = os.environ.get(LIBRARY_ENV)
    if override:
        return override
    candidates = [
        _PACKAGE_DIR.parents[1] / "lib" / _LIBRARY_NAME,   # <prefix>/lib/pythonX/fp8mlir
        _PACKAGE_DIR.parents[2] / "lib" / _LIBRARY_NAME,   # <prefix>/lib/python3/dist-packages
        _PACKAGE_DIR.parents[1] / "build" / "lib" / _LIBRARY_NAME,  # source tree
    ]
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    return None


@functools.lru_cache(maxsize=None)
def load():
    """The C API library with its signatures declared; raises
    CompilerUnavailableError when there is none (e.g. on a GPU machine
    without LLVM)."""
    from .errors import CompilerUnavailableError
    path = find_library()
    if path is None:
        raise CompilerUnavailableError(
            f"{_LIBRARY_NAME} not found: build FP8-MLIR (scripts/build.sh) or set "
            f"${LIBRARY_ENV}; kernels compiled elsewhere still run from a kernel cache")
    try:
        lib = ctypes.CDLL(path)
    except OSError as error:
        raise CompilerUnavailableError(f"cannot load {path}: {error}") from error
    for name, (restype, argtypes) in _SIGNATURES.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib


def available():
    from .errors import CompilerUnavailableError
    try:
        load()
        return True
    except CompilerUnavailableError:
        return False

"""ctypes binding of the host runtime ``libfp8rt.so`` (runtime/include/fp8rt/fp8rt.h).

Usage::

    from fp8mlir._runtime import Kernel
    with Kernel("kernels/gemm.json") as kernel:
        kernel.launch(a=a, b=b, a_scale_inv=sa, b_scale_inv=sb, d=d)

Operands are torch CUDA tensors passed by their metadata name. The binding
only translates them (pointer, dtype, shape and strides in elements); the
runtime validates them against NAME.json and reports what is wrong, which
``launch`` raises as ``RuntimeError``.

torch is imported lazily (only to find the current stream when none is
given), so this module imports and loads metadata on machines without torch.
"""

import ctypes
import ctypes.util
import functools
import json
import os
from pathlib import Path

LIBRARY_ENV = "FP8RT_LIBRARY"
MAX_RANK = 4  # FP8RT_MAX_RANK

# fp8rt_status
SUCCESS = 0

# fp8rt_dtype values, in the header's order.
DTYPES = {
    "e4m3": 0,
    "e5m2": 1,
    "ue8m0": 2,
    "bf16": 3,
    "f16": 4,
    "f32": 5,
    "i32": 6,
}

# torch dtype names (str(tensor.dtype) without "torch.") -> fp8rt dtype name.
TORCH_DTYPES = {
    "float8_e4m3fn": "e4m3",
    "float8_e5m2": "e5m2",
    "float8_e8m0fnu": "ue8m0",
    "bfloat16": "bf16",
    "float16": "f16",
    "float32": "f32",
    "int32": "i32",
}

_REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_LIBRARY_PATHS = (
    _REPO_ROOT / "build" / "runtime" / "libfp8rt.so",
    _REPO_ROOT / "build" / "lib" / "libfp8rt.so",
    Path("/tmp/fp8rt-build/libfp8rt.so"),
    Path("/tmp/fp8rt-build/lib/libfp8rt.so"),
)


class Fp8rtTensor(ctypes.Structure):
    """struct fp8rt_tensor."""

    _fields_ = [
        ("name", ctypes.c_char_p),
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int),
        ("rank", ctypes.c_int),
        ("shape", ctypes.c_int64 * MAX_RANK),
        ("strides", ctypes.c_int64 * MAX_RANK),
    ]


def find_library(path=None):
    """Path of libfp8rt.so: $FP8RT_LIBRARY, else `path`, else the usual build dirs."""
    for candidate in (os.environ.get(LIBRARY_ENV), path):
        if candidate:
            if not Path(candidate).is_file():
                raise FileNotFoundError(f"fp8rt library not found: {candidate}")
            return str(candidate)
    for candidate in DEFAULT_LIBRARY_PATHS:
        if candidate.is_file():
            return str(candidate)
    found = ctypes.util.find_library("fp8rt")
    if found:
        return found
    searched = ", ".join(str(p) for p in DEFAULT_LIBRARY_PATHS)
    raise FileNotFoundError(
        f"libfp8rt.so not found: set {LIBRARY_ENV} or pass its path "
        f"(searched {searched} and the loader path)")


@functools.lru_cache(maxsize=None)
def _open_library(path):
    lib = ctypes.CDLL(path)
    kernel_p = ctypes.c_void_p
    lib.fp8rt_kernel_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(kernel_p)]
    lib.fp8rt_kernel_load.restype = ctypes.c_int
    lib.fp8rt_kernel_destroy.argtypes = [kernel_p]
    lib.fp8rt_kernel_destroy.restype = None
    lib.fp8rt_launch.argtypes = [kernel_p, ctypes.POINTER(Fp8rtTensor),
                                 ctypes.c_int, ctypes.c_void_p]
    lib.fp8rt_launch.restype = ctypes.c_int
    if hasattr(lib, "fp8rt_launch_ordered"):
        lib.fp8rt_launch_ordered.argtypes = [kernel_p, ctypes.POINTER(Fp8rtTensor),
                                             ctypes.c_int, ctypes.c_void_p]
        lib.fp8rt_launch_ordered.restype = ctypes.c_int
        lib.fp8rt_kernel_num_operands.argtypes = [kernel_p]
        lib.fp8rt_kernel_num_operands.restype = ctypes.c_int
        lib.fp8rt_kernel_operand_name.argtypes = [kernel_p, ctypes.c_int]
        lib.fp8rt_kernel_operand_name.restype = ctypes.c_char_p
    if hasattr(lib, "fp8rt_kernel_for_expected_m"):
        lib.fp8rt_kernel_for_expected_m.argtypes = [kernel_p, ctypes.c_int64, ctypes.c_int,
                                                    ctypes.POINTER(kernel_p)]
        lib.fp8rt_kernel_for_expected_m.restype = ctypes.c_int
    if hasattr(lib, "fp8rt_kernel_for_m"):
        lib.fp8rt_kernel_for_m.argtypes = [kernel_p, ctypes.c_int64, ctypes.POINTER(kernel_p)]
        lib.fp8rt_kernel_for_m.restype = ctypes.c_int
    lib.fp8rt_kernel_name.argtypes = [kernel_p]
    lib.fp8rt_kernel_name.restype = ctypes.c_char_p
    lib.fp8rt_last_error.argtypes = []
    lib.fp8rt_last_error.restype = ctypes.c_char_p
    if hasattr(lib, "fp8rt_status_string"):
        lib.fp8rt_status_string.argtypes = [ctypes.c_int]
        lib.fp8rt_status_string.restype = ctypes.c_char_p
    return lib


def load_library(path=None):
    """The loaded runtime (one CDLL per resolved path)."""
    return _open_library(find_library(path))


def _error_message(lib, status, what):
    """fp8rt_last_error() (it names the call, kernel and operand) + the status."""
    message = (lib.fp8rt_last_error() or b"").decode("utf-8", "replace")
    status_name = str(status)
    if hasattr(lib, "fp8rt_status_string"):
        status_name = (lib.fp8rt_status_string(status) or b"?").decode()
    return f"{message or what + ' failed'} [{status_name}]"


def dtype_name(tensor, operand="tensor"):
    """fp8rt dtype name of a torch tensor, or ValueError."""
    torch_name = str(tensor.dtype).replace("torch.", "")
    try:
        return TORCH_DTYPES[torch_name]
    except KeyError:
        raise ValueError(f"operand '{operand}': dtype {tensor.dtype} has no fp8rt "
                         f"equivalent (supported: {', '.join(TORCH_DTYPES)})") from None


def fill_operand(operand, name, tensor):
    """Describes a torch CUDA tensor in the fp8rt_tensor `operand`
    (shape/strides in elements); `name` is for messages."""
    if not getattr(tensor, "is_cuda", False):
        raise ValueError(f"operand '{name}' must be a CUDA tensor "
                         f"(got {type(tensor).__name__} on "
                         f"{getattr(tensor, 'device', 'no device')})")
    shape = tuple(tensor.shape)
    if len(shape) > MAX_RANK:
        raise ValueError(f"operand '{name}' has rank {len(shape)}; "
                         f"fp8rt supports at most {MAX_RANK}")
    operand.data = tensor.data_ptr() or None
    operand.dtype = DTYPES[dtype_name(tensor, name)]
    operand.rank = len(shape)
    for i, (extent, stride) in enumerate(zip(shape, tensor.stride())):
        operand.shape[i] = extent
        operand.strides[i] = stride
    return operand


def make_operand(name, tensor):
    """fp8rt_tensor describing a torch CUDA tensor (shape/strides in elements)."""
    operand = fill_operand(Fp8rtTensor(), name, tensor)
    operand.name = name.encode()
    return operand


def stream_handle(stream):
    """CUstream as an int: None -> torch's current stream; int; or .cuda_stream."""
    if stream is None:
        import torch  # lazily: only needed to find the current stream
        return torch.cuda.current_stream().cuda_stream
    if isinstance(stream, int):
        return stream
    handle = getattr(stream, "cuda_stream", None)
    if handle is None:
        raise TypeError(f"stream must be None, an int CUstream or have "
                        f".cuda_stream; got {type(stream).__name__}")
    return handle


class BoundLaunch:
    """A launch with its operand array built once (cheap to repeat, e.g. when timing).

    Keeps the tensors alive; calling it launches on `stream` (see stream_handle).
    """

    def __init__(self, kernel, operands):
        self._kernel = kernel
        self._tensors = dict(operands)  # keep the memory alive
        items = [(n, t) for n, t in operands.items() if t is not None]
        self._array = (Fp8rtTensor * max(len(items), 1))()
        for i, (name, tensor) in enumerate(items):
            self._array[i] = make_operand(name, tensor)
        self._count = len(items)

    def __call__(self, stream=None):
        self._kernel._launch_array(self._array, self._count, stream_handle(stream))


class Kernel:
    """One compiled kernel: NAME.json (+ the PTX/cubin it names) loaded by fp8rt."""

    def __init__(self, json_path, library=None):
        self.path = Path(json_path)
        with open(self.path, encoding="utf-8") as f:
            self.meta = json.load(f)
        self._lib = load_library(library)
        handle = ctypes.c_void_p()
        status = self._lib.fp8rt_kernel_load(str(self.path).encode(), ctypes.byref(handle))
        if status != SUCCESS:
            raise RuntimeError(_error_message(self._lib, status,
                                              f"fp8rt_kernel_load({self.path})"))
        self._handle = handle

    @property
    def name(self):
        return self.meta.get("name", self.path.stem)

    @property
    def handle(self):
        """The fp8rt_kernel pointer as an int (for the C++ operators)."""
        self._check_open()
        return self._handle.value

    @property
    def operand_names(self):
        """The operand names in metadata order (fp8rt_launch_ordered's)."""
        return tuple(op["name"] for op in self.meta["operands"])

    def launch_ordered(self, tensors, stream=None):
        """fp8rt_launch_ordered: `tensors[i]` is operand i of
        `operand_names` (None for an absent optional operand). The operand
        array is kept per kernel, so a launch allocates no ctypes objects."""
        self._check_open()
        names = self.operand_names
        if len(tensors) != len(names):
            raise ValueError(f"{self.name}: expected {len(names)} operands "
                             f"({', '.join(names)}), got {len(tensors)}")
        array = self.__dict__.get("_ordered")
        if array is None:
            array = self._ordered = (Fp8rtTensor * max(len(names), 1))()
        for operand, name, tensor in zip(array, names, tensors):
            if tensor is None:
                operand.data = None
                operand.rank = 0
            else:
                fill_operand(operand, name, tensor)
        status = self._lib.fp8rt_launch_ordered(self._handle, array, len(names),
                                                ctypes.c_void_p(stream_handle(stream) or None))
        if status != SUCCESS:
            raise RuntimeError(_error_message(self._lib, status, f"launch of {self.name}"))

    def for_m(self, m):
        """fp8rt_kernel_for_m: the kernel a launch for `m` rows runs on the
        current CUDA device (this one or the launch variant the runtime
        chooses by M; owned by this kernel, closed with it)."""
        self._check_open()
        if not hasattr(self._lib, "fp8rt_kernel_for_m"):
            raise RuntimeError("this libfp8rt has no fp8rt_kernel_for_m: rebuild it")
        chosen = ctypes.c_void_p()
        status = self._lib.fp8rt_kernel_for_m(self._handle, m, ctypes.byref(chosen))
        if status != SUCCESS:
            raise RuntimeError(_error_message(self._lib, status,
                                              f"fp8rt_kernel_for_m({self.name})"))
        return self._owned(chosen)

    def _owned(self, chosen):
        """This kernel, or the LaunchVariant object of handle `chosen`."""
        if chosen.value == self._handle.value:
            return self
        variants = self.__dict__.setdefault("_variants", {})
        if chosen.value not in variants:
            variants[chosen.value] = LaunchVariant(self, chosen)
        return variants[chosen.value]

    def for_expected_m(self, expected_m, num_sms):
        """fp8rt_kernel_for_expected_m: the kernel to launch when each group
        is expected to hold `expected_m` rows, on a device of `num_sms` SMs:
        this one or one of its launch variants (a masked grouped GEMM's;
        owned by this kernel, closed with it)."""
        self._check_open()
        if not hasattr(self._lib, "fp8rt_kernel_for_expected_m"):
            raise RuntimeError("this libfp8rt has no fp8rt_kernel_for_expected_m: rebuild it")
        chosen = ctypes.c_void_p()
        status = self._lib.fp8rt_kernel_for_expected_m(self._handle, expected_m, num_sms,
                                                       ctypes.byref(chosen))
        if status != SUCCESS:
            raise RuntimeError(_error_message(self._lib, status,
                                              f"fp8rt_kernel_for_expected_m({self.name})"))
        return self._owned(chosen)

    def bind(self, **operands):
        """Prepare a launch; operands whose value is None are left out."""
        self._check_open()
        return BoundLaunch(self, operands)

    def launch(self, stream=None, **operands):
        """Validate and enqueue one launch on `stream` (default: torch's current)."""
        self.bind(**operands)(stream)

    def _launch_array(self, array, count, stream):
        self._check_open()
        status = self._lib.fp8rt_launch(self._handle, array, count,
                                        ctypes.c_void_p(stream or None))
        if status != SUCCESS:
            raise RuntimeError(_error_message(self._lib, status,
                                              f"launch of {self.name}"))

    def _check_open(self):
        if self._handle is None:
            raise RuntimeError(f"kernel {self.name} is closed")

    def close(self):
        """Unload the kernel (no launch of it may still be running)."""
        handle, self._handle = getattr(self, "_handle", None), None
        if handle is not None and handle.value:
            self._lib.fp8rt_kernel_destroy(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing sensible to do
            pass

    def __repr__(self):
        state = "open" if getattr(self, "_handle", None) is not None else "closed"
        return f"Kernel({self.name!r}, {state})"


class LaunchVariant(Kernel):
    """A launch variant of a loaded Kernel (Kernel.for_m,
    Kernel.for_expected_m): launched like it, with its operands; owned by
    that kernel, so closing it only lets go of the handle."""

    def __init__(self, owner, handle):  # pylint: disable=super-init-not-called
        self._owner, self._lib, self._handle = owner, owner._lib, handle
        name = (self._lib.fp8rt_kernel_name(handle) or b"").decode()
        # The metadata file the runtime loaded it from (NAME.json beside the
        # kernel's, as fp8-compile names them).
        self.path = next((owner.path.parent / f for f in owner.meta.get("variants", ())
                          if Path(f).stem == name), None)
        self.meta = {"name": name, "operands": owner.meta["operands"]}
        if self.path is not None:
            with open(self.path, encoding="utf-8") as f:
                self.meta = json.load(f)

    def _check_open(self):
        self._owner._check_open()
        super()._check_open()

    def close(self):
        self._handle = None

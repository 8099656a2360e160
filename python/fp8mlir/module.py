"""Compiled modules: every public function of an MLIR input, run as one call.

    m = fp8mlir.load_module("out/")          # DIR/module.json + the kernels
    y, x_col, ... = m.linear_forward(x, w)   # torch CUDA tensors
    m = fp8mlir.compile_module(text, "sm_90a")

A function's arguments are passed by position or by name (the ``fp8.name``
module.json gives them); its results are allocated with ``torch.empty`` (or
taken from ``out=``: a sequence in result order or a dict by name), its
workspace comes from PyTorch's caching allocator, and it runs on the current
CUDA stream. A result that is an argument updated in place (``alias_of``)
is that argument. The runtime (libfp8rt, ``fp8rt_module_*`` /
``fp8rt_function_*``) checks every tensor; its message is raised as
``RuntimeError``.

Loading, introspection and workspace sizes need no torch and no GPU; a call
imports torch.

A function compiled from sharded IR (the collectives of fp8-shard-quantize)
runs its collectives in order with its kernels, on the same stream, through
the module's collective backend: ``load_module(dir, process_group=pg)``
wires one to ``torch.distributed`` (NCCL) on process group ``pg`` (None: the
default group); ``collectives=obj`` takes any object with the methods
``fp8mlir._collectives`` describes; ``collectives="nccl"`` runs them through
the runtime's own NCCL backend on the process group's communicator.
"""

import ast
import ctypes
import shutil
import tempfile
from pathlib import Path

from . import _collectives, _runtime

MAX_RANK = _runtime.MAX_RANK
DTYPE_NAMES = tuple(_runtime.DTYPES)  # fp8rt_dtype order


class TensorInfo(ctypes.Structure):
    """struct fp8rt_tensor_info."""
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.c_char_p * MAX_RANK), ("alignment", ctypes.c_int64),
                ("written", ctypes.c_int), ("alias_of", ctypes.c_int)]


_P = ctypes.c_void_p
_SIGNATURES = {
    "fp8rt_module_load": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_P)]),
    "fp8rt_module_destroy": (None, [_P]),
    "fp8rt_module_chip": (ctypes.c_char_p, [_P]),
    "fp8rt_module_num_functions": (ctypes.c_int, [_P]),
    "fp8rt_module_function_name": (ctypes.c_char_p, [_P, ctypes.c_int]),
    "fp8rt_module_function": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.POINTER(_P)]),
    "fp8rt_function_name": (ctypes.c_char_p, [_P]),
    "fp8rt_function_num_arguments": (ctypes.c_int, [_P]),
    "fp8rt_function_num_results": (ctypes.c_int, [_P]),
    "fp8rt_function_argument": (ctypes.c_int, [_P, ctypes.c_int, ctypes.POINTER(TensorInfo)]),
    "fp8rt_function_result": (ctypes.c_int, [_P, ctypes.c_int, ctypes.POINTER(TensorInfo)]),
    "fp8rt_function_num_symbols": (ctypes.c_int, [_P]),
    "fp8rt_function_symbol_name": (ctypes.c_char_p, [_P, ctypes.c_int]),
    "fp8rt_function_workspace_bytes": (ctypes.c_int, [
        _P, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_int64), ctypes.c_int,
        ctypes.POINTER(ctypes.c_size_t)]),
    "fp8rt_function_workspace_bytes_for": (ctypes.c_int, [
        _P, ctypes.POINTER(_runtime.Fp8rtTensor), ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)]),
    "fp8rt_function_call": (ctypes.c_int, [
        _P, ctypes.POINTER(_runtime.Fp8rtTensor), ctypes.c_int,
        ctypes.POINTER(_runtime.Fp8rtTensor), ctypes.c_int, _P, ctypes.c_size_t, _P]),
    "fp8rt_module_set_collectives": (ctypes.c_int, [
        _P, ctypes.POINTER(_collectives.Fp8rtCollectives)]),
    "fp8rt_function_num_collectives": (ctypes.c_int, [_P]),
    "fp8rt_nccl_collectives": (ctypes.c_int, [
        _P, ctypes.POINTER(_collectives.Fp8rtCollectives)]),
}


def _library(path=None):
    lib = _runtime.load_library(path)
    if not getattr(lib, "_fp8mlir_module_api", False):
        missing = [name for name in _SIGNATURES if not hasattr(lib, name)]
        if missing:
            raise RuntimeError(f"{lib._name} has no module API ({', '.join(missing[:3])}, ...): "
                               f"rebuild the runtime")
        for name, (restype, argtypes) in _SIGNATURES.items():
            function = getattr(lib, name)
            function.restype, function.argtypes = restype, argtypes
        lib._fp8mlir_module_api = True
    return lib


def _check(lib, status, what):
    if status != _runtime.SUCCESS:
        raise RuntimeError(_runtime._error_message(lib, status, what))


# --- extents: integers, symbols, +, *, ceildiv(a, b), roundup(a, b) -----------

_FUNCTIONS = {"ceildiv": lambda a, b: -(-a // b), "roundup": lambda a, b: -(-a // b) * b}


def evaluate(extent, symbols):
    """The value of a module.json extent for `symbols` {name: int}."""
    if isinstance(extent, int):
        return extent
    return _eval(ast.parse(extent.strip(), mode="eval").body, symbols, extent)


def _eval(node, symbols, text):
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name) and node.id in symbols:
        return symbols[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
        a, b = _eval(node.left, symbols, text), _eval(node.right, symbols, text)
        return a + b if isinstance(node.op, ast.Add) else a * b
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCTIONS and len(node.args) == 2 and not node.keywords):
        return _FUNCTIONS[node.func.id](*(_eval(a, symbols, text) for a in node.args))
    raise ValueError(f"extent {text!r}: cannot evaluate it with symbols {sorted(symbols)}")


def _parse_extent(text):
    try:
        return int(text)
    except ValueError:
        return text


class Tensor:
    """An argument or a result of a function: name, dtype (fp8rt name),
    shape (ints and symbol expressions), alignment, written (arguments
    updated in place), alias_of (results: the index of the argument it is,
    or None)."""

    def __init__(self, info):
        self.name = info.name.decode()
        self.dtype = DTYPE_NAMES[info.dtype]
        self.shape = tuple(_parse_extent(info.shape[i].decode()) for i in range(info.rank))
        self.alignment = info.alignment
        self.written = bool(info.written)
        self.alias_of = None if info.alias_of < 0 else info.alias_of

    @property
    def static(self):
        return all(isinstance(e, int) for e in self.shape)

    def __repr__(self):
        return f"Tensor({self.name!r}, {self.dtype}, {list(self.shape)})"


class Function:
    """A function of a module, callable on torch CUDA tensors (see the
    module docstring)."""

    def __init__(self, module, handle):
        lib = self._lib = module._lib
        self.module = module
        self._handle = handle
        self.name = lib.fp8rt_function_name(handle).decode()
        info = TensorInfo()
        self.arguments, self.results = [], []
        for count, get, out in ((lib.fp8rt_function_num_arguments, lib.fp8rt_function_argument,
                                 self.arguments),
                                (lib.fp8rt_function_num_results, lib.fp8rt_function_result,
                                 self.results)):
            for i in range(count(handle)):
                _check(lib, get(handle, i, ctypes.byref(info)), "introspection")
                out.append(Tensor(info))
        self.symbols = tuple(lib.fp8rt_function_symbol_name(handle, i).decode()
                             for i in range(lib.fp8rt_function_num_symbols(handle)))
        self.argument_names = tuple(a.name for a in self.arguments)
        self.result_names = tuple(r.name for r in self.results)
        self._index = {name: i for i, name in enumerate(self.argument_names)}
        self._workspace = {}
        self._static = not self.symbols and all(t.static for t in self.arguments + self.results)
        self.num_collectives = lib.fp8rt_function_num_collectives(handle)
        self._call = None  # the torch side, built at the first call

    def __repr__(self):
        return (f"Function({self.name!r}, arguments={list(self.argument_names)}, "
                f"results={list(self.result_names)})")

    def bind_symbols(self, shapes):
        """{symbol: value} from the argument shapes (a list in argument order)."""
        values = {}
        for arg, shape in zip(self.arguments, shapes):
            for extent, value in zip(arg.shape, shape):
                if isinstance(extent, str) and extent in self.symbols:
                    values.setdefault(extent, int(value))
        return values

    def result_shapes(self, symbols):
        return [tuple(evaluate(e, symbols) for e in r.shape) for r in self.results]

    def workspace_bytes(self, **symbols):
        """The workspace a call needs for these symbol values (all of them)."""
        key = tuple(sorted(symbols.items()))
        found = self._workspace.get(key)
        if found is None:
            names = (ctypes.c_char_p * max(len(key), 1))(*(n.encode() for n, _ in key))
            values = (ctypes.c_int64 * max(len(key), 1))(*(v for _, v in key))
            out = ctypes.c_size_t()
            _check(self._lib, self._lib.fp8rt_function_workspace_bytes(
                self._handle, names, values, len(key), ctypes.byref(out)),
                f"workspace size of {self.name}")
            found = self._workspace[key] = out.value
        return found

    def __call__(self, *args, out=None, stream=None, **kwargs):
        if self._call is None:
            from ._module_torch import FunctionCall
            self._call = FunctionCall(self)
        return self._call(args, kwargs, out, stream)


class Module:
    """A loaded module directory (module.json + kernels); its functions are
    attributes and ``module[name]``."""

    def __init__(self, directory, library=None, collectives=None):
        self.directory = Path(directory)
        self._lib = _library(library)
        self._collectives = None
        handle = ctypes.c_void_p()
        _check(self._lib, self._lib.fp8rt_module_load(str(self.directory).encode(),
                                                      ctypes.byref(handle)),
               f"loading the module {self.directory}")
        self._handle = handle
        self.chip = self._lib.fp8rt_module_chip(handle).decode()
        self.functions = {}
        for i in range(self._lib.fp8rt_module_num_functions(handle)):
            name = self._lib.fp8rt_module_function_name(handle, i).decode()
            fn = ctypes.c_void_p()
            _check(self._lib, self._lib.fp8rt_module_function(handle, name.encode(),
                                                              ctypes.byref(fn)), name)
            self.functions[name] = Function(self, fn)
        if collectives is not None:
            self.set_collectives(collectives)

    def set_collectives(self, backend):
        """Sets the collective backend (an object with the methods
        ``fp8mlir._collectives`` describes, a ``CollectiveTable``, or None
        to remove it)."""
        table = backend
        if backend is not None and not isinstance(backend, _collectives.CollectiveTable):
            table = _collectives.CollectiveTable(backend)
        _check(self._lib, self._lib.fp8rt_module_set_collectives(
            self._handle, ctypes.byref(table.table) if table is not None else None),
            "setting the collective backend")
        self._collectives = table  # the callbacks live as long as the module

    def set_nccl_communicator(self, comm):
        """Runs the collectives through the runtime's NCCL backend on
        communicator `comm` (an ncclComm_t as an int)."""
        table = _collectives.Fp8rtCollectives()
        _check(self._lib, self._lib.fp8rt_nccl_collectives(comm, ctypes.byref(table)),
               "the NCCL backend")
        _check(self._lib, self._lib.fp8rt_module_set_collectives(self._handle,
                                                                 ctypes.byref(table)),
               "setting the collective backend")
        self._collectives = table

    def __getitem__(self, name):
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(f"module {self.directory} has no function {name!r} (it has "
                           f"{', '.join(self.functions) or 'none'})") from None

    def __getattr__(self, name):
        functions = self.__dict__.get("functions")
        if functions is not None and name in functions:
            return functions[name]
        raise AttributeError(f"module has no function {name!r}")

    def close(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle is not None and handle.value:
            self._lib.fp8rt_module_destroy(handle)

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __repr__(self):
        return f"Module({str(self.directory)!r}, {self.chip}, {list(self.functions)})"


_NO_GROUP = object()


def load_module(directory, library=None, process_group=_NO_GROUP, collectives=None):
    """Loads DIR/module.json and its kernels (fp8rt_module_load). With
    `process_group` (a torch.distributed group, None for the default one),
    collective steps run on it through torch.distributed (NCCL) on the
    call's stream, or, with ``collectives="nccl"``, through the runtime's
    NCCL backend on the group's communicator; `collectives` may also be any
    backend object (``fp8mlir._collectives``)."""
    module = Module(directory, library)
    if process_group is not _NO_GROUP:
        from .distributed import module_collectives
        if collectives == "nccl":
            module.set_nccl_communicator(module_collectives.nccl_communicator(process_group))
            return module
        collectives = module_collectives.TorchCollectives(process_group)
    if collectives is not None:
        module.set_collectives(collectives)
    return module


# --- compiling ---------------------------------------------------------------

def compile_module_to(source, chip, directory):
    """Compiles MLIR text for `chip` into `directory` (module.json + every
    kernel, what fp8-compile writes). Returns the directory."""
    from . import compiler
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if hasattr(source, "to_mlir"):
        source = source.to_mlir()
    kernels, program = compiler.compile_module_program(source, chip)
    for kernel in kernels:
        kernel.save(directory)
    (directory / "module.json").write_text(program)
    return directory


def compile_module(source, chip, directory=None, library=None):
    """Compiles MLIR text (or a builder with ``to_mlir()``) for `chip` and
    loads it; the files go to `directory` (default: a new temporary
    directory, removed when the process exits)."""
    if directory is None:
        directory = tempfile.mkdtemp(prefix="fp8mlir-module-")
        import atexit
        atexit.register(shutil.rmtree, directory, True)
    compile_module_to(source, chip, directory)
    return load_module(directory, library)

"""Compile fp8 MLIR to PTX + runtime metadata from Python (C API via ctypes)."""

import ctypes
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import _capi
from .errors import CompileError, Diagnostic


def supported_chips():
    """The chips the compiler generates code for, from the compiler library
    (``fp8GetSupportedChipName``), e.g. ``("sm_90a", "sm_100a")``."""
    lib = _capi.load()
    return tuple(lib.fp8GetSupportedChipName(i).text()
                 for i in range(lib.fp8GetNumSupportedChips()))


@dataclass
class Kernel:
    """A compiled kernel: what fp8-compile writes as NAME.ptx and NAME.json.

    `variants` are its launch variants (a GEMM with a run-time M: the same
    GEMM with smaller tiles, which the runtime picks from by M); `save`
    writes them next to it, where the runtime looks for them."""
    name: str
    ptx: str
    metadata_json: str
    variants: list = field(default_factory=list)

    @property
    def metadata(self):
        return json.loads(self.metadata_json)

    @property
    def chip(self):
        """The chip the kernel was compiled for (its metadata's), or None."""
        return self.metadata.get("chip")

    @property
    def variant_of(self):
        """The kernel this one is a launch variant of, or None."""
        return self.metadata.get("variant_of")

    def save(self, directory):
        """Writes NAME.ptx and NAME.json (and those of the launch variants)
        into `directory`; returns the JSON path."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for variant in self.variants:
            variant.save(directory)
        (directory / f"{self.name}.ptx").write_text(self.ptx)
        json_path = directory / f"{self.name}.json"
        json_path.write_text(self.metadata_json)
        return json_path


class _Compiler:
    """One MLIR context with the compiler's dialects, used under a lock."""

    def __init__(self):
        self.lib = _capi.load()
        registry = self.lib.mlirDialectRegistryCreate()
        self.lib.fp8RegisterCompilerDialects(registry)
        # Threading off: the process may fork, and compiles are serialized.
        self.context = self.lib.mlirContextCreateWithRegistry(registry, False)
        self.lib.mlirDialectRegistryDestroy(registry)
        self.lock = threading.Lock()

    def compile(self, source, source_name, chip, opt_level, default_recipe, gemm_config,
                with_program=False):
        lib = self.lib
        strings = [s.encode() for s in (source, source_name, chip,
                                         default_recipe or "", gemm_config or "")]
        refs = [_capi.StringRef.of(s) for s in strings]
        options = _capi.CompileOptions(refs[2], opt_level, refs[3], refs[4])
        with self.lock:
            result = lib.fp8CompileSource(self.context, refs[0], refs[1],
                                          ctypes.byref(options))
        try:
            diagnostics = [
                Diagnostic(_capi.SEVERITIES.get(lib.fp8CompileResultGetDiagnosticSeverity(result, i),
                                                "error"),
                           lib.fp8CompileResultGetDiagnosticLocation(result, i).text(),
                           lib.fp8CompileResultGetDiagnosticMessage(result, i).text(),
                           lib.fp8CompileResultGetDiagnosticText(result, i).text())
                for i in range(lib.fp8CompileResultGetNumDiagnostics(result))]
            if not lib.fp8CompileResultSucceeded(result):
                target = chip or "the module's fp8.target"
                raise CompileError(f"compilation for {target} failed", diagnostics)
            kernels = [Kernel(lib.fp8CompileResultGetKernelName(result, i).text(),
                              lib.fp8CompileResultGetKernelPTX(result, i).text(),
                              lib.fp8CompileResultGetKernelMetadata(result, i).text())
                       for i in range(lib.fp8CompileResultGetNumKernels(result))]
            if with_program:
                return kernels, lib.fp8CompileResultGetModuleProgram(result).text()
            return kernels, diagnostics
        finally:
            lib.fp8CompileResultDestroy(result)


_compiler = None
_compiler_lock = threading.Lock()


def _get_compiler():
    global _compiler
    with _compiler_lock:
        if _compiler is None:
            _compiler = _Compiler()
        return _compiler


def compile_all(source, chip=None, *, opt_level=3, default_recipe=None,
                gemm_config=None, source_name="<fp8mlir>", warnings=None):
    """Compiles MLIR text (or a builder with ``to_mlir()``) to its kernels
    for `chip` (one of supported_chips()), or, when it is None, for the
    ``fp8.target`` attribute the source module carries.

    Raises CompileError, carrying every diagnostic, when the source does not
    parse or compile (an unknown chip, no chip and no target, MXFP8 on
    sm_90a, ...). Warnings of a successful compilation are appended to the
    list `warnings` when given.
    """
    if hasattr(source, "to_mlir"):
        source = source.to_mlir()
    if not isinstance(source, str):
        raise TypeError(f"expected MLIR text or a builder, got {type(source).__name__}")
    if not isinstance(opt_level, int) or isinstance(opt_level, bool) or opt_level < 0:
        raise ValueError(f"opt_level must be an integer between 0 and 3, got {opt_level!r}")
    kernels, diagnostics = _get_compiler().compile(
        source, source_name, "" if chip is None else str(chip), opt_level,
        default_recipe, gemm_config)
    if warnings is not None:
        warnings.extend(diagnostics)
    return kernels


def compile(source, chip=None, **options):  # noqa: A001 (the package's verb)
    """Like compile_all, for a source with exactly one kernel (not counting
    its launch variants, which it carries in `variants`): returns it."""
    kernels = compile_all(source, chip, **options)
    primaries = [k for k in kernels if k.variant_of is None]
    if len(primaries) != 1:
        names = ", ".join(k.name for k in primaries)
        raise CompileError(f"expected one kernel, got {len(primaries)} ({names}): use compile_all")
    kernel = primaries[0]
    kernel.variants = [k for k in kernels if k.variant_of == kernel.name]
    return kernel


def compile_module_program(source, chip, *, opt_level=3):
    """(kernels, module.json text) of MLIR text compiled for `chip` (a
    compiler library with fp8CompileResultGetModuleProgram)."""
    return _get_compiler().compile(source, "<fp8mlir>", str(chip), opt_level, None, None,
                                   with_program=True)

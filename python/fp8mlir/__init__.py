"""FP8-MLIR Python package.

    import fp8mlir
    kernel = fp8mlir.compile(fp8mlir.ScaledMatmul("rowwise", n=4096, k=2048), chip="sm_90a")
    d = fp8mlir.scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16)
    d = fp8mlir.grouped_scaled_mm(a, b, scale_a, scale_b, offsets=offs)  # experts
    q = fp8mlir.quantize(x, "blockwise")
    m = fp8mlir.load_module("out/")                 # fp8-compile's DIR/module.json
    model = fp8mlir.convert_to_fp8(model, recipe="current")   # fp8mlir.nn.Linear
    with fp8mlir.calibrating(model): ...   # delayed scaling: a high-precision step

Importing the package loads no native library and does not import torch:
``compile`` loads libFP8CAPI.so on first use; ``scaled_mm``, ``quantize``
and ``dequantize`` (the PyTorch operators, fp8mlir._torch_ops) import torch,
the runtime libfp8rt.so and the C++ operators when first looked up;
``load_module`` / ``compile_module`` load the runtime (a call imports
torch); ``fp8mlir.nn``, ``convert_to_fp8`` and ``calibrating`` import torch;
``fp8mlir.numerics`` is NumPy only.
"""

from .compiler import Kernel, compile, compile_all, supported_chips  # noqa: F401
from .errors import CompileError, CompilerUnavailableError, Diagnostic  # noqa: F401
from .gemm import ScaledMatmul  # noqa: F401
from .grouped import GroupedScaledMatmul  # noqa: F401
from .linear_step import LinearStep  # noqa: F401
from .module import Module, compile_module, load_module  # noqa: F401
from .ops import KernelCache  # noqa: F401
from .quantization import DequantizeSpec, QuantizedTensor, QuantizeSpec  # noqa: F401

_TORCH_API = ("scaled_mm", "quantize", "dequantize")


def __getattr__(name):
    if name in _TORCH_API:
        from . import _torch_ops
        return getattr(_torch_ops, name)
    if name == "grouped_scaled_mm":
        from . import _grouped_ops
        return _grouped_ops.grouped_scaled_mm
    if name in ("nn", "convert_to_fp8", "calibrating"):
        from . import nn
        return nn if name == "nn" else getattr(nn, name)
    raise AttributeError(f"module 'fp8mlir' has no attribute {name!r}")

"""FP8-MLIR Python package.

    import fp8mlir
    kernel = fp8mlir.compile(fp8mlir.ScaledMatmul("rowwise", n=4096, k=2048), chip="sm_90a")
    d = fp8mlir.scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16)

Importing the package loads no native library and does not import torch:
``compile`` loads libFP8CAPI.so on first use, ``scaled_mm`` the runtime
libfp8rt.so, and ``fp8mlir.numerics`` is NumPy only.
"""

from .compiler import Kernel, compile, compile_all, supported_chips  # noqa: F401
from .errors import CompileError, CompilerUnavailableError, Diagnostic  # noqa: F401
from .gemm import ScaledMatmul  # noqa: F401
from .ops import KernelCache, scaled_mm  # noqa: F401

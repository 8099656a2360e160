import sys
from pathlib import Path

import pytest

# The package from this source tree.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU, torch and libfp8rt.so")


@pytest.fixture(autouse=True)
def _gpu_kernels_from_the_table(request, monkeypatch):
    """A GPU test may run only the kernels of fp8mlir.testing.torch_ops_cases,
    the table the GPU machine's kernel cache is filled from (test_gpu.py
    --populate): asking for another one fails the test with the table named,
    whether or not the cache happens to hold the kernel."""
    if request.node.get_closest_marker("gpu") is None:
        return
    from fp8mlir.ops import KernelCache
    from fp8mlir.testing.torch_ops_cases import check_in_table
    kernels = KernelCache.kernels

    def kernels_in_table(cache, spec, chip):
        check_in_table(spec)
        return kernels(cache, spec, chip)

    monkeypatch.setattr(KernelCache, "kernels", kernels_in_table)


@pytest.fixture
def runtime_library():
    """The libfp8rt.so of this build (the tests that need it are skipped
    where it is not built)."""
    from fp8mlir import _runtime
    try:
        return _runtime.find_library()
    except FileNotFoundError:
        pytest.skip("libfp8rt.so is not built")

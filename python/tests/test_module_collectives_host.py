"""Collective steps of a compiled module from Python, without torch or a GPU:
a backend object wired through ``load_module(..., collectives=...)`` is what
the runtime calls, in the order of the steps, with the device addresses,
counts, dtypes, reductions, device group and stream of the call; a call
without a backend, and a backend that raises, fail with the runtime's
message. (The torch.distributed backend runs on two GPUs:
bench/dist_module.py.)"""

import ctypes
import json

import pytest

from fp8mlir import _collectives, _runtime
from fp8mlir.module import load_module

GROUP = {"grid": "tp", "axes": [0], "size": 2}


@pytest.fixture
def module_dir(tmp_path):
    """A program of collectives only (no kernel, no memory step: nothing
    needs the driver): amax all-reduced (max), the FP8 shard all-gathered,
    the f32 partial sums reduce-scattered."""
    try:
        _runtime.find_library()
    except FileNotFoundError:
        pytest.skip("libfp8rt.so is not built")
    program = {
        "format": "fp8-mlir-module", "version": 1, "chip": "sm_90a", "kernels": [],
        "functions": [{
            "name": "exchange", "symbols": [{"name": "n", "argument": "q", "dim": 0}],
            "arguments": [
                {"name": "amax", "dtype": "f32", "shape": [], "alignment": 4},
                {"name": "q", "dtype": "e4m3", "shape": ["n", 256], "alignment": 16},
                {"name": "partial", "dtype": "f32", "shape": [64, 32], "alignment": 4}],
            "results": [
                {"name": "amax_g", "dtype": "f32", "shape": [], "alignment": 4},
                {"name": "gathered", "dtype": "e4m3", "shape": ["n*2", 256], "alignment": 16},
                {"name": "sums", "dtype": "f32", "shape": [32, 32], "alignment": 4}],
            "buffers": [], "workspace_bytes": 0,
            "steps": [
                {"kind": "all_reduce", "reduction": "max", "source": "amax",
                 "target": "amax_g", "dtype": "f32", "count": 1, "group": GROUP},
                {"kind": "all_gather", "source": "q", "target": "gathered", "dtype": "e4m3",
                 "count": "n*256", "group": GROUP},
                {"kind": "reduce_scatter", "reduction": "sum", "source": "partial",
                 "target": "sums", "dtype": "f32", "count": 1024, "group": GROUP}]}]}
    (tmp_path / "module.json").write_text(json.dumps(program))
    return tmp_path


class FakeBackend:
    def __init__(self, fail=None):
        self.calls, self.fail = [], fail

    def rank(self, group):
        return 1

    def all_reduce(self, group, send, recv, count, dtype, op, stream):
        self.calls.append(("all_reduce", group, send, recv, count, dtype, op, stream))

    def all_gather(self, group, send, recv, count, dtype, stream):
        if self.fail:
            raise RuntimeError(self.fail)
        self.calls.append(("all_gather", group, send, recv, count, dtype, stream))

    def reduce_scatter(self, group, send, recv, count, dtype, op, stream):
        self.calls.append(("reduce_scatter", group, send, recv, count, dtype, op, stream))


def _tensor(address, dtype, shape):
    t = _runtime.Fp8rtTensor()
    t.data, t.dtype, t.rank = address, _runtime.DTYPES[dtype], len(shape)
    for i, extent in enumerate(shape):
        t.shape[i] = extent
    return t


def _call(fn, rows=4, stream=0x5100):
    args = (_runtime.Fp8rtTensor * 3)(_tensor(0x1000, "f32", []),
                                      _tensor(0x20000, "e4m3", [rows, 256]),
                                      _tensor(0x40000, "f32", [64, 32]))
    results = (_runtime.Fp8rtTensor * 3)(_tensor(0x1100, "f32", []),
                                         _tensor(0x60000, "e4m3", [2 * rows, 256]),
                                         _tensor(0x80000, "f32", [32, 32]))
    return fn._lib.fp8rt_function_call(fn._handle, args, 3, results, 3, None, 0, stream)


def test_the_backend_runs_each_collective_in_order(module_dir):
    backend = FakeBackend()
    m = load_module(module_dir, collectives=backend)
    fn = m.exchange
    assert fn.num_collectives == 3
    assert _call(fn) == _runtime.SUCCESS, fn._lib.fp8rt_last_error()
    group = _collectives.DeviceGroup("tp", (0,), 2)
    assert backend.calls == [
        ("all_reduce", group, 0x1000, 0x1100, 1, "f32", "max", 0x5100),
        ("all_gather", group, 0x20000, 0x60000, 4 * 256, "e4m3", 0x5100),
        ("reduce_scatter", group, 0x40000, 0x80000, 1024, "f32", "sum", 0x5100)]


def test_a_call_without_a_backend_fails_before_anything(module_dir):
    m = load_module(module_dir)
    status = _call(m.exchange)
    message = m._lib.fp8rt_last_error().decode()
    assert m._lib.fp8rt_status_string(status) == b"FP8RT_ERROR_COLLECTIVE"
    assert ("function exchange has collective steps (all_reduce on grid \"tp\" axes [0] "
            "(2 devices), ...) and the module has no collective backend") in message
    # Set, then removed.
    m.set_collectives(FakeBackend())
    m.set_collectives(None)
    assert _call(m.exchange) == status


def test_a_raising_backend_fails_the_call_with_its_message(module_dir):
    m = load_module(module_dir, collectives=FakeBackend(fail="no peer"))
    status = _call(m.exchange)
    assert m._lib.fp8rt_status_string(status) == b"FP8RT_ERROR_COLLECTIVE"
    message = m._lib.fp8rt_last_error().decode()
    assert ("step 1 (all_gather on grid \"tp\" axes [0] (2 devices) of argument 'q' into "
            "result 'gathered'): the collective backend's all_gather returned 1: "
            "RuntimeError: no peer") in message


def test_the_table_forwards_the_c_arguments():
    backend = FakeBackend()
    table = _collectives.CollectiveTable(backend).table
    axes = (ctypes.c_int64 * 2)(0, 1)
    group = _collectives.Fp8rtDeviceGroup(b"grid", axes, 2, 4)
    rank = ctypes.c_int64()
    assert table.rank(None, ctypes.byref(group), ctypes.byref(rank)) == 0 and rank.value == 1
    assert table.reduce_scatter(None, ctypes.byref(group), 16, 32, 8,
                                _runtime.DTYPES["bf16"], 1, None) == 0
    assert backend.calls == [("reduce_scatter", _collectives.DeviceGroup("grid", (0, 1), 4),
                              16, 32, 8, "bf16", "max", 0)]

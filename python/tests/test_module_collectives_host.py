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


class GroupingBackend(FakeBackend):
    """A backend with group calls (as the NCCL one has)."""

    def group_start(self):
        self.calls.append(("group_start",))

    def group_end(self):
        self.calls.append(("group_end",))


def _gathers_module(tmp_path, chained):
    """FP8 data [4, 256] and its 1x128 scales [4, 2] all-gathered, then
    (``chained``) a third gather that reads the first one's result."""
    gather = {"kind": "all_gather", "group": GROUP}
    steps = [dict(gather, source="q", target="gathered", dtype="e4m3", count=1024),
             dict(gather, source="s", target="scales", dtype="f32", count=8)]
    results = [{"name": "gathered", "dtype": "e4m3", "shape": [8, 256], "alignment": 16},
               {"name": "scales", "dtype": "f32", "shape": [8, 2], "alignment": 4}]
    if chained:
        steps.append(dict(gather, source="gathered", target="twice", dtype="e4m3", count=2048))
        results.append({"name": "twice", "dtype": "e4m3", "shape": [16, 256], "alignment": 16})
    program = {
        "format": "fp8-mlir-module", "version": 1, "chip": "sm_90a", "kernels": [],
        "functions": [{
            "name": "gathers", "symbols": [],
            "arguments": [{"name": "q", "dtype": "e4m3", "shape": [4, 256], "alignment": 16},
                          {"name": "s", "dtype": "f32", "shape": [4, 2], "alignment": 4}],
            "results": results, "buffers": [], "workspace_bytes": 0, "steps": steps}]}
    (tmp_path / "module.json").write_text(json.dumps(program))
    return tmp_path


def _call_gathers(fn, chained):
    args = (_runtime.Fp8rtTensor * 2)(_tensor(0x1000, "e4m3", [4, 256]),
                                      _tensor(0x2000, "f32", [4, 2]))
    shapes = [(0x3000, "e4m3", [8, 256]), (0x4000, "f32", [8, 2])]
    if chained:
        shapes.append((0x5000, "e4m3", [16, 256]))
    results = (_runtime.Fp8rtTensor * len(shapes))(*[_tensor(*s) for s in shapes])
    return fn._lib.fp8rt_function_call(fn._handle, args, 2, results, len(shapes), None, 0, 0x77)


@pytest.mark.parametrize("chained", [False, True])
def test_consecutive_independent_gathers_run_in_one_group(tmp_path, module_dir, chained):
    backend = GroupingBackend()
    fn = load_module(_gathers_module(tmp_path, chained), collectives=backend).gathers
    assert _call_gathers(fn, chained) == _runtime.SUCCESS, fn._lib.fp8rt_last_error()
    group = _collectives.DeviceGroup("tp", (0,), 2)
    grouped = [("group_start",),
               ("all_gather", group, 0x1000, 0x3000, 1024, "e4m3", 0x77),
               ("all_gather", group, 0x2000, 0x4000, 8, "f32", 0x77),
               ("group_end",)]
    # a gather of a gathered result waits for the group to end: alone
    tail = [("all_gather", group, 0x3000, 0x5000, 2048, "e4m3", 0x77)] if chained else []
    assert backend.calls == grouped + tail
    # without group calls: the same gathers one by one
    plain = FakeBackend()
    fn = load_module(_gathers_module(tmp_path, chained), collectives=plain).gathers
    assert _call_gathers(fn, chained) == _runtime.SUCCESS
    assert plain.calls == grouped[1:3] + tail


def test_a_failing_gather_still_closes_the_group(tmp_path, module_dir):
    backend = GroupingBackend(fail="no peer")
    fn = load_module(_gathers_module(tmp_path, False), collectives=backend).gathers
    status = _call_gathers(fn, False)
    assert fn._lib.fp8rt_status_string(status) == b"FP8RT_ERROR_COLLECTIVE"
    assert "RuntimeError: no peer" in fn._lib.fp8rt_last_error().decode()
    assert backend.calls == [("group_start",), ("group_end",)]


def test_gathers_whose_workspace_buffers_share_bytes_run_one_by_one(tmp_path, module_dir):
    """The compiler may give buffers of consecutive steps the same bytes:
    here the first gather reads buffer "xb" and the second writes buffer
    "sg" at the same offset (each live over its own steps). In one group
    both would run at once, so the call issues them apart."""
    group = {"group": GROUP, "dtype": "f32"}
    buffers = [{"name": "xb", "dtype": "f32", "shape": [256], "alignment": 16,
                "offset": 0, "bytes": 1024},
               {"name": "sg", "dtype": "f32", "shape": [32], "alignment": 16,
                "offset": 0, "bytes": 128}]
    steps = [dict(group, kind="all_reduce", source="x", target="xb", count=256,
                  reduction="sum"),
             dict(group, kind="all_gather", source="xb", target="gathered", count=256),
             dict(group, kind="all_gather", source="s", target="sg", count=16),
             dict(group, kind="all_reduce", source="sg", target="scales", count=32,
                  reduction="sum")]
    program = {
        "format": "fp8-mlir-module", "version": 1, "chip": "sm_90a", "kernels": [],
        "functions": [{
            "name": "gathers", "symbols": [],
            "arguments": [{"name": "x", "dtype": "f32", "shape": [256], "alignment": 16},
                          {"name": "s", "dtype": "f32", "shape": [16], "alignment": 16}],
            "results": [{"name": "gathered", "dtype": "f32", "shape": [512], "alignment": 16},
                        {"name": "scales", "dtype": "f32", "shape": [32], "alignment": 16}],
            "buffers": buffers, "workspace_bytes": 1024, "steps": steps}]}
    (tmp_path / "module.json").write_text(json.dumps(program))
    backend = GroupingBackend()
    fn = load_module(tmp_path, collectives=backend).gathers
    args = (_runtime.Fp8rtTensor * 2)(_tensor(0x1000, "f32", [256]),
                                      _tensor(0x2000, "f32", [16]))
    results = (_runtime.Fp8rtTensor * 2)(_tensor(0x3000, "f32", [512]),
                                         _tensor(0x4000, "f32", [32]))
    status = fn._lib.fp8rt_function_call(fn._handle, args, 2, results, 2, 0x10000, 1024, 0x77)
    assert status == _runtime.SUCCESS, fn._lib.fp8rt_last_error()
    assert [c[0] for c in backend.calls] == ["all_reduce", "all_gather", "all_gather",
                                             "all_reduce"]

"""The collective backend of a module (``fp8rt_collectives``) from a Python
object, for functions whose program has collective steps (all_reduce,
all_gather, reduce_scatter, all_slice; docs/distributed.md).

A backend has four methods, called by the runtime in the order of the
function's steps, each enqueueing its collective on ``stream`` (a CUstream
as an int; 0: the legacy default stream):

- ``rank(group)``: this device's index in the group;
- ``all_reduce(group, send, recv, count, dtype, op, stream)``;
- ``all_gather(group, send, recv, send_count, dtype, stream)``;
- ``reduce_scatter(group, send, recv, recv_count, dtype, op, stream)``;
- optional, both or neither: ``group_start()`` and ``group_end()`` around
  consecutive all-gathers of one group with distinct buffers (the FP8 data
  of a quantization and its scales), which the backend may issue as one
  collective; ``group_end`` is called even when one in between raised.

``group`` is a :class:`DeviceGroup` (grid name, axes, size), ``send`` and
``recv`` device addresses (ints), counts in elements, ``dtype`` an fp8rt
dtype name ("e4m3", "f32", ...), ``op`` "sum" or "max". An exception fails
the call with FP8RT_ERROR_COLLECTIVE and its message. No torch here:
``fp8mlir.distributed.module_collectives`` has the torch.distributed one.
"""

import ctypes
from dataclasses import dataclass

from . import _runtime

DTYPE_NAMES = tuple(_runtime.DTYPES)
REDUCTIONS = ("sum", "max")  # fp8rt_reduction order


@dataclass(frozen=True)
class DeviceGroup:
    grid: str
    axes: tuple
    size: int


class Fp8rtDeviceGroup(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_char_p), ("axes", ctypes.POINTER(ctypes.c_int64)),
                ("num_axes", ctypes.c_int), ("size", ctypes.c_int64)]


_GroupP = ctypes.POINTER(Fp8rtDeviceGroup)
_P, _Size, _Int = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
RANK = ctypes.CFUNCTYPE(_Int, _P, _GroupP, ctypes.POINTER(ctypes.c_int64))
ALL_REDUCE = ctypes.CFUNCTYPE(_Int, _P, _GroupP, _P, _P, _Size, _Int, _Int, _P)
ALL_GATHER = ctypes.CFUNCTYPE(_Int, _P, _GroupP, _P, _P, _Size, _Int, _P)
REDUCE_SCATTER = ALL_REDUCE
# The message is returned as the address of a buffer the table keeps (a
# c_char_p result of a callback would not outlive it).
LAST_ERROR = ctypes.CFUNCTYPE(ctypes.c_void_p, _P)
GROUP = ctypes.CFUNCTYPE(_Int, _P)


class Fp8rtCollectives(ctypes.Structure):
    """struct fp8rt_collectives."""
    _fields_ = [("user_data", _P), ("rank", RANK), ("all_reduce", ALL_REDUCE),
                ("all_gather", ALL_GATHER), ("reduce_scatter", REDUCE_SCATTER),
                ("last_error", LAST_ERROR), ("group_start", GROUP), ("group_end", GROUP)]


def _group(pointer):
    g = pointer.contents
    return DeviceGroup(g.grid.decode(), tuple(g.axes[i] for i in range(g.num_axes)), g.size)


class CollectiveTable:
    """The C table of `backend`; keeps the callbacks alive (hold it as long
    as a module uses it)."""

    def __init__(self, backend):
        self.backend = backend
        self._error = ctypes.create_string_buffer(1)

        def guarded(body):
            def call(*args):
                try:
                    body(*args)
                    return 0
                except Exception as error:  # noqa: BLE001 - reported to C
                    self._error = ctypes.create_string_buffer(
                        f"{type(error).__name__}: {error}".encode("utf-8", "replace"))
                    return 1
            return call

        def rank(_, group, out):
            out[0] = int(backend.rank(_group(group)))

        def all_reduce(_, group, send, recv, count, dtype, op, stream):
            backend.all_reduce(_group(group), send or 0, recv or 0, count, DTYPE_NAMES[dtype],
                               REDUCTIONS[op], stream or 0)

        def all_gather(_, group, send, recv, count, dtype, stream):
            backend.all_gather(_group(group), send or 0, recv or 0, count, DTYPE_NAMES[dtype],
                               stream or 0)

        def reduce_scatter(_, group, send, recv, count, dtype, op, stream):
            backend.reduce_scatter(_group(group), send or 0, recv or 0, count,
                                   DTYPE_NAMES[dtype], REDUCTIONS[op], stream or 0)

        groups = hasattr(backend, "group_start") and hasattr(backend, "group_end")
        self.table = Fp8rtCollectives(
            None, RANK(guarded(rank)), ALL_REDUCE(guarded(all_reduce)),
            ALL_GATHER(guarded(all_gather)), REDUCE_SCATTER(guarded(reduce_scatter)),
            LAST_ERROR(lambda _: ctypes.addressof(self._error)),
            GROUP(guarded(lambda _: backend.group_start())) if groups else GROUP(),
            GROUP(guarded(lambda _: backend.group_end())) if groups else GROUP())

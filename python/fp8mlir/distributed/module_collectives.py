"""The collective backend of compiled modules on torch.distributed.

``fp8mlir.load_module(dir, process_group=pg)`` gives a module whose
collective steps (all_reduce, all_gather, reduce_scatter, all_slice) run on
``pg`` through torch.distributed (NCCL for CUDA tensors), ordered on the
stream the call runs on: the runtime passes its stream, the collective is
issued with that stream current, and torch's NCCL process group makes its
own stream wait for it and it for the collective (``async_op=False``).

Consecutive all-gathers of one group with distinct buffers (a quantization's
FP8 data and its scales) come bracketed by ``group_start`` / ``group_end``:
they run as ONE ``all_gather_into_tensor`` of a uint8 buffer holding each
gather's piece at a 16-byte aligned offset (one copy in per gather; one
strided copy out per gather: the received pieces are interleaved).

The device addresses the runtime passes become tensors without copies
(``__cuda_array_interface__``). Gathers and slices move bytes (FP8 and UE8M0
data included); sums and maxima reduce f32, bf16 or f16 with NCCL's
operators (NCCL's floating-point max does not promise to propagate NaN: a
NaN amax is then lost, unlike the bit-pattern reduction of
``fp8mlir.distributed.comm``).

A program names its device group by a grid and axes (``shard.grid``); this
backend runs every group on ``process_group``, whose size must be the
group's (a grid of more than one axis needs one process group per axis
set: ``groups={("tp", (0,)): pg0, ...}``).
"""

from .._collectives import DeviceGroup  # noqa: F401  (re-exported for backends)

_DTYPE_BYTES = {"e4m3": 1, "e5m2": 1, "ue8m0": 1, "bf16": 2, "f16": 2, "f32": 4, "i32": 4}


class _Raw:
    """A device buffer as __cuda_array_interface__ bytes."""

    def __init__(self, address, nbytes):
        self.__cuda_array_interface__ = {
            "shape": (nbytes,), "typestr": "|u1", "data": (address, False),
            "version": 3, "strides": None, "stream": None}


class TorchCollectives:
    """fp8rt collectives on torch.distributed process groups."""

    def __init__(self, process_group=None, groups=None):
        import torch
        import torch.distributed as dist
        self.torch, self.dist = torch, dist
        self.default, self.groups = process_group, dict(groups or {})
        self.calls = []  # (collective, grid, bytes this rank sent)
        self._pending = None  # between group_start and group_end: the gathers

    def _group(self, group):
        pg = self.groups.get((group.grid, tuple(group.axes)), self.default)
        size = self.dist.get_world_size(pg)
        if size != group.size:
            raise ValueError(f"the program's group on grid {group.grid!r} axes "
                             f"{list(group.axes)} has {group.size} devices, the process "
                             f"group {size}")
        return pg

    def _tensor(self, address, count, dtype):
        torch = self.torch
        raw = torch.as_tensor(_Raw(address, count * _DTYPE_BYTES[dtype]), device="cuda")
        views = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
        return raw.view(views[dtype]) if dtype in views else raw

    def _stream(self, stream):
        torch = self.torch
        return torch.cuda.stream(torch.cuda.ExternalStream(stream) if stream
                                 else torch.cuda.default_stream())

    def _op(self, op):
        return self.dist.ReduceOp.MAX if op == "max" else self.dist.ReduceOp.SUM

    def rank(self, group):
        return self.dist.get_rank(self._group(group))

    def all_reduce(self, group, send, recv, count, dtype, op, stream):
        pg = self._group(group)
        with self._stream(stream):
            out = self._tensor(recv, count, dtype)
            out.copy_(self._tensor(send, count, dtype))
            self.dist.all_reduce(out, op=self._op(op), group=pg)
        self.calls.append(("all_reduce", group.grid, count * _DTYPE_BYTES[dtype]))

    def group_start(self):
        self._pending = []

    def group_end(self):
        pending, self._pending = self._pending, None
        if pending:
            self._packed_gather(pending)

    def _packed_gather(self, gathers):
        """The deferred all-gathers (group, send, recv, bytes, stream) as
        one all_gather_into_tensor on a packed uint8 buffer."""
        from .comm import pack_offsets
        torch = self.torch
        group, stream = gathers[0][0], gathers[0][4]
        offsets, width = pack_offsets([g[3] for g in gathers])
        with self._stream(stream):
            packed = torch.empty(width, dtype=torch.uint8, device="cuda")
            for (_, send, _, nbytes, _), o in zip(gathers, offsets):
                packed[o:o + nbytes].copy_(_bytes(self, send, nbytes))
            out = torch.empty(width * group.size, dtype=torch.uint8, device="cuda")
            self.dist.all_gather_into_tensor(out, packed, group=self._group(group))
            rows = out.view(group.size, width)
            for (_, _, recv, nbytes, _), o in zip(gathers, offsets):
                target = _bytes(self, recv, nbytes * group.size).view(group.size, nbytes)
                target.copy_(rows[:, o:o + nbytes])
        self.calls.append(("all_gather", group.grid, width))

    def all_gather(self, group, send, recv, count, dtype, stream):
        if self._pending is not None:
            pending = self._pending
            if pending and (pending[0][0] != group or pending[0][4] != stream):
                raise ValueError("the gathers of one group call differ in device group "
                                 "or stream")
            self._group(group)  # checks the size now
            pending.append((group, send, recv, count * _DTYPE_BYTES[dtype], stream))
            return
        pg = self._group(group)
        with self._stream(stream):
            nbytes = count * _DTYPE_BYTES[dtype]
            self.dist.all_gather_into_tensor(_bytes(self, recv, nbytes * group.size),
                                             _bytes(self, send, nbytes), group=pg)
        self.calls.append(("all_gather", group.grid, count * _DTYPE_BYTES[dtype]))

    def reduce_scatter(self, group, send, recv, count, dtype, op, stream):
        pg = self._group(group)
        with self._stream(stream):
            self.dist.reduce_scatter_tensor(self._tensor(recv, count, dtype),
                                            self._tensor(send, count * group.size, dtype),
                                            op=self._op(op), group=pg)
        self.calls.append(("reduce_scatter", group.grid,
                           count * group.size * _DTYPE_BYTES[dtype]))


def _bytes(backend, address, nbytes):
    return backend.torch.as_tensor(_Raw(address, nbytes), device="cuda")


def nccl_communicator(process_group=None):
    """The ncclComm_t (an int) of a torch.distributed NCCL process group,
    for the runtime's own NCCL backend (``load_module(...,
    collectives="nccl")``). The communicator exists once the group has run a
    collective: a barrier creates it."""
    import torch
    import torch.distributed as dist
    backend = dist.group.WORLD if process_group is None else process_group
    nccl = backend._get_backend(torch.device("cuda"))
    if not hasattr(nccl, "_comm_ptr"):
        raise RuntimeError("this torch's NCCL process group does not expose its "
                           "communicator (_comm_ptr): use the torch.distributed backend "
                           "(load_module(..., process_group=pg))")
    dist.barrier(group=process_group, device_ids=[torch.cuda.current_device()])
    comm = nccl._comm_ptr()
    if not comm:
        raise RuntimeError("the NCCL process group has no communicator yet")
    return comm

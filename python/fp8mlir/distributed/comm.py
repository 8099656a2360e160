"""Communicators: the collectives FP8 communication needs, on NCCL through
torch.distributed, or among threads of one process for host tests.

A communicator has ``rank`` and ``size`` and three collectives:

- ``all_reduce_max(bits)``: elementwise max of int32 arrays, in place where
  the backend allows, returned. The sharded quantization reduces amaxes as
  the int32 bit patterns of non-negative f32 values (NaN canonicalized to
  0x7FC00000), whose integer order is the float order with NaN above inf:
  the reduced amax propagates NaN exactly as a single-device amax does,
  which NCCL's floating-point max does not promise.
- ``all_gather(flat, counts)``: rank i contributes ``counts[i]`` elements
  (uneven shards); returns the list of every rank's 1-D array. The torch
  version pads to the largest count and uses one all_gather_into_tensor.
  ``all_gather_concat(flat, counts)``: the same joined into one 1-D array
  (with equal counts, the gathered buffer itself: no copy).
- ``all_gather_packed(flats, counts)``: several arrays gathered in ONE
  all-gather (the FP8 data of a blockwise shard with its scales):
  ``flats[p]`` holds ``counts[p][rank]`` elements; each rank's arrays are
  packed as bytes into one buffer (``pack_offsets``: array p at a 16-byte
  aligned offset, room for the largest rank's elements), the buffers are
  all-gathered, and the result is, per array, the list of every rank's
  elements (views into the gathered bytes).
- ``reduce_scatter_sum(flat, counts)``: sum over ranks of 1-D arrays of
  sum(counts) elements; rank i keeps its ``counts[i]`` slice.

``traffic`` records (collective, bytes sent by this rank) of each call.
"""

import threading

PACK_ALIGN = 16  # bytes: every packed array starts aligned for any element type


def pack_offsets(nbytes):
    """(offset of each array in one rank's packed buffer, the buffer's
    bytes) for arrays of ``nbytes`` bytes: each at a PACK_ALIGN-aligned
    offset, so the gathered bytes can be viewed as each array's type."""
    offsets, width = [], 0
    for n in nbytes:
        offsets.append(width)
        width += -(-n // PACK_ALIGN) * PACK_ALIGN
    return offsets, width


def _check_packed(rank, flats, counts):
    if len(flats) != len(counts):
        raise ValueError(f"{len(flats)} arrays, {len(counts)} count lists")
    for p, (flat, c) in enumerate(zip(flats, counts)):
        n = flat.numel() if hasattr(flat, "numel") else flat.size
        if n != c[rank]:
            raise ValueError(f"rank {rank}: array {p} has {n} elements, the layout says "
                             f"{c[rank]}")


class TorchCommunicator:
    """Collectives of a torch.distributed process group (NCCL for CUDA
    tensors) on the current CUDA stream."""

    def __init__(self, group=None):
        import torch
        import torch.distributed as dist
        self.torch, self.dist, self.group = torch, dist, group
        self.rank = dist.get_rank(group)
        self.size = dist.get_world_size(group)
        self.traffic = []

    def all_reduce_max(self, bits):
        self.dist.all_reduce(bits, op=self.dist.ReduceOp.MAX, group=self.group)
        self.traffic.append(("all_reduce_max", bits.numel() * bits.element_size()))
        return bits

    def all_gather(self, flat, counts):
        out, width = self._all_gather_padded(flat, counts)
        return [out[i * width:i * width + c] for i, c in enumerate(counts)]

    def all_gather_concat(self, flat, counts):
        out, width = self._all_gather_padded(flat, counts)
        if all(c == width for c in counts):
            return out
        return self.torch.cat([out[i * width:i * width + c] for i, c in enumerate(counts)])

    def _all_gather_padded(self, flat, counts):
        """(every rank's elements padded to the largest count, that count)."""
        if flat.numel() != counts[self.rank]:
            raise ValueError(f"rank {self.rank}: {flat.numel()} elements, the layout says "
                             f"{counts[self.rank]}")
        width = max(counts)
        send = flat
        if flat.numel() != width:
            send = self.torch.zeros(width, dtype=flat.dtype, device=flat.device)
            send[:flat.numel()] = flat
        out = self.torch.empty(width * self.size, dtype=flat.dtype, device=flat.device)
        # fp8 tensors travel as their bytes (NCCL has no fp8 reduction to keep).
        self.dist.all_gather_into_tensor(_as_bytes(self.torch, out), _as_bytes(self.torch, send),
                                         group=self.group)
        self.traffic.append(("all_gather", width * flat.element_size()))
        return out, width

    def packed_send(self, like, parts):
        """This rank's send buffer of all_gather_packed for ``parts``
        ((torch dtype, counts) per array) and a 1-D view of it per array
        (this rank's elements), for producers that write their output
        there directly (all_gather_packed then copies nothing in)."""
        torch = self.torch
        sizes = [max(c) * _itemsize(torch, d) for d, c in parts]
        offsets, width = pack_offsets(sizes)
        send = torch.empty(width, dtype=torch.uint8, device=like.device)
        views = [send[o:o + c[self.rank] * _itemsize(torch, d)].view(d)
                 for o, (d, c) in zip(offsets, parts)]
        return send, views

    def all_gather_packed(self, flats, counts, send=None):
        """One all_gather_into_tensor of every rank's ``flats`` packed into
        one uint8 buffer (``send``: packed_send's, already holding them, or
        None: packed here, one copy per array). Returns per array the
        list of the ranks' elements, views of the gathered bytes."""
        torch = self.torch
        _check_packed(self.rank, flats, counts)
        sizes = [max(c) * f.element_size() for f, c in zip(flats, counts)]
        offsets, width = pack_offsets(sizes)
        if send is None:
            send = torch.empty(width, dtype=torch.uint8, device=flats[0].device)
        for flat, o in zip(flats, offsets):
            n = flat.numel() * flat.element_size()
            if n and flat.data_ptr() != send.data_ptr() + o:
                send[o:o + n].copy_(_as_bytes(torch, flat).view(torch.uint8))
        out = torch.empty(width * self.size, dtype=torch.uint8, device=send.device)
        self.dist.all_gather_into_tensor(out, send, group=self.group)
        self.traffic.append(("all_gather", width))
        rows = out.view(self.size, width)
        return [[rows[i, o:o + c[i] * f.element_size()].view(f.dtype) for i in range(self.size)]
                for f, c, o in zip(flats, counts, offsets)]

    def reduce_scatter_sum(self, flat, counts):
        width = max(counts)
        if flat.numel() != sum(counts):
            raise ValueError(f"reduce_scatter: {flat.numel()} elements, expected {sum(counts)}")
        if all(c == width for c in counts):
            send = flat.contiguous()
        else:
            send = self.torch.zeros(width * self.size, dtype=flat.dtype, device=flat.device)
            start = 0
            for i, c in enumerate(counts):
                send[i * width:i * width + c] = flat[start:start + c]
                start += c
        out = self.torch.empty(width, dtype=flat.dtype, device=flat.device)
        self.dist.reduce_scatter_tensor(out, send, op=self.dist.ReduceOp.SUM, group=self.group)
        self.traffic.append(("reduce_scatter", send.numel() * send.element_size()))
        return out[:counts[self.rank]]


def _itemsize(torch, dtype):
    return dtype.itemsize if hasattr(dtype, "itemsize") else \
        torch.empty((), dtype=dtype).element_size()


def _as_bytes(torch, t):
    return t.view(torch.uint8) if t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2) else t


class ThreadGroup:
    """``size`` ranks as threads of this process exchanging NumPy arrays:
    ``ThreadGroup(2).run(fn)`` calls fn(communicator) on every rank and
    returns the results by rank (an exception on any rank is raised)."""

    def __init__(self, size, timeout=60.0):
        if size < 1:
            raise ValueError(f"a group needs at least one rank, got {size}")
        self.size = size
        self._barrier = threading.Barrier(size, timeout=timeout)
        self._slots = [None] * size

    def _exchange(self, rank, value):
        self._slots[rank] = value
        self._barrier.wait()
        values = list(self._slots)
        self._barrier.wait()
        return values

    def run(self, fn):
        results, errors = [None] * self.size, [None] * self.size

        def body(rank):
            try:
                results[rank] = fn(FakeCommunicator(self, rank))
            except BaseException as e:  # noqa: BLE001 - re-raised below
                errors[rank] = e
                self._barrier.abort()
        threads = [threading.Thread(target=body, args=(r,)) for r in range(self.size)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        first = next((e for e in errors if e is not None
                      and not isinstance(e, threading.BrokenBarrierError)), None)
        if first is not None or any(errors):
            raise first or errors[0]
        return results


class FakeCommunicator:
    """One rank of a ThreadGroup (NumPy arrays)."""

    def __init__(self, group, rank):
        import numpy as np
        self.np, self.group, self.rank, self.size = np, group, rank, group.size
        self.traffic = []

    def all_reduce_max(self, bits):
        values = self.group._exchange(self.rank, self.np.array(bits, copy=True))
        self.traffic.append(("all_reduce_max", bits.nbytes))
        return self.np.maximum.reduce(values)

    def all_gather(self, flat, counts):
        if flat.size != counts[self.rank]:
            raise ValueError(f"rank {self.rank}: {flat.size} elements, the layout says "
                             f"{counts[self.rank]}")
        values = self.group._exchange(self.rank, self.np.array(flat, copy=True))
        self.traffic.append(("all_gather", max(counts) * flat.itemsize))
        return values

    def all_gather_concat(self, flat, counts):
        return self.np.concatenate(self.all_gather(flat, counts))

    def all_gather_packed(self, flats, counts, send=None):
        """TorchCommunicator.all_gather_packed's byte layout on NumPy: the
        arrays packed into one uint8 buffer, one exchange, unpacked."""
        np = self.np
        _check_packed(self.rank, flats, counts)
        sizes = [max(c) * f.itemsize for f, c in zip(flats, counts)]
        offsets, width = pack_offsets(sizes)
        send = np.zeros(width, np.uint8)
        for flat, o in zip(flats, offsets):
            raw = np.ascontiguousarray(flat).view(np.uint8)
            send[o:o + raw.size] = raw
        rows = self.group._exchange(self.rank, send)
        self.traffic.append(("all_gather", width))
        return [[rows[i][o:o + c[i] * f.itemsize].view(f.dtype) for i in range(self.size)]
                for f, c, o in zip(flats, counts, offsets)]

    def reduce_scatter_sum(self, flat, counts):
        values = self.group._exchange(self.rank, self.np.array(flat, copy=True))
        self.traffic.append(("reduce_scatter", flat.nbytes))
        total = sum(values[1:], values[0])
        start = sum(counts[:self.rank])
        return total[start:start + counts[self.rank]]

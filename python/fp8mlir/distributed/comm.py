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
- ``reduce_scatter_sum(flat, counts)``: sum over ranks of 1-D arrays of
  sum(counts) elements; rank i keeps its ``counts[i]`` slice.

``traffic`` records (collective, bytes sent by this rank) of each call.
"""

import threading


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

    def reduce_scatter_sum(self, flat, counts):
        values = self.group._exchange(self.rank, self.np.array(flat, copy=True))
        self.traffic.append(("reduce_scatter", flat.nbytes))
        total = sum(values[1:], values[0])
        start = sum(counts[:self.rank])
        return total[start:start + counts[self.rank]]

"""FP8 communication across devices (docs/distributed.md).

- ``sharded``: sharded quantization equal to single-device quantization
  bit for bit (TP row/column shards, ZeRO-1 flat shards), FP8 all-gathers;
- ``comm``: the collectives, through torch.distributed (NCCL) or among
  threads (host tests);
- ``backends``: NumPy and torch arrays for the same algorithm;
- ``tp`` (torch): column- and row-parallel FP8 linear layers with sequence
  parallelism and FP8 all-gathers.

Nothing here is imported by ``import fp8mlir``.
"""

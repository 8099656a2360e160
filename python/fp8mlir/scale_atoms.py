"""The 128x4 scale-factor atom layout in which the sm_100a block-scaled
GEMM kernels read MX (UE8M0, one per 1x32 block) scales.

A [rows, ceil(K/32)] scale matrix is stored as [ceil(rows/128),
ceil(K/128), 512] bytes: atom (i, g) holds rows [128 i, 128 i + 128) and
K blocks [4 g, 4 g + 4), the scale of (row r, block b) at byte
(r % 32) * 16 + (r // 32 % 4) * 4 + b % 4 (PTX ISA, "Scale factor A/B
layout"; the kernel metadata's b_scale_inv shape). Padding rows and blocks
hold 127 (2^0). A grouped GEMM's B scales are one such array per group,
stacked: [G, ceil(N/128), ceil(K/128), 512].

Works on numpy arrays and torch tensors alike (no torch import).
"""

from ._math import ceil_div

ATOM_ROWS = 128
ATOM_K_BLOCKS = 4
ATOM_BYTES = ATOM_ROWS * ATOM_K_BLOCKS
MX_BLOCK = 32
PADDING_CODE = 127  # UE8M0 of 1.0


def atom_shape(rows, k):
    """[ceil(rows/128), ceil(K/128), 512]: the atoms of a [rows, K] operand's
    MX scales."""
    return (ceil_div(rows, ATOM_ROWS), ceil_div(k, ATOM_ROWS), ATOM_BYTES)


def atom_byte(row, block):
    """(atom row, atom column, byte in the atom) of the scale of (row,
    K block)."""
    return (row // ATOM_ROWS, block // ATOM_K_BLOCKS,
            (row % 32) * 16 + (row % ATOM_ROWS) // 32 * 4 + block % ATOM_K_BLOCKS)


def to_atoms(codes, rows, k, new_full):
    """The atoms of `codes` ([rows, ceil(K/32)] UE8M0 codes as uint8, a numpy
    array or a torch tensor); `new_full(shape, value)` makes an array of the
    same kind (numpy.full, or a tensor's new_full)."""
    atom_rows, atom_cols, _ = atom_shape(rows, k)
    padded = new_full((atom_rows * ATOM_ROWS, atom_cols * ATOM_K_BLOCKS), PADDING_CODE)
    padded[:rows, :ceil_div(k, MX_BLOCK)] = codes
    # (atom row, row // 32 % 4, row % 32, atom column, block % 4) ->
    # (atom row, atom column, row % 32, row // 32 % 4, block % 4).
    x = padded.reshape(atom_rows, 4, 32, atom_cols, ATOM_K_BLOCKS)
    order = (0, 3, 2, 1, 4)
    x = x.permute(*order) if hasattr(x, "permute") else x.transpose(order)
    return x.reshape(atom_rows, atom_cols, ATOM_BYTES)

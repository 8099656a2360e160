"""The modules of the fp8mlir.nn.GroupedLinear GPU test
(python/tests/test_gpu_grouped_linear.py): pure Python; ``python3 -m
fp8mlir.populate CACHE --suite grouped-linear`` compiles them.
"""

from dataclasses import dataclass

from ..grouped_linear_step import ALIGNMENT, GroupedLinearStep

# (name, experts, N, K, tokens per expert): uneven counts, an empty expert,
# a single-token expert, one expert holding every token.
LAYERS = {
    "uneven": (4, 256, 384, (300, 0, 1, 129)),
    "one_expert": (4, 256, 384, (0, 512, 0, 0)),
    "wide": (8, 512, 256, (130, 7, 0, 256, 1, 0, 383, 64)),
}


def padded_rows(tokens):
    """M of a layer's inputs: every expert's rows padded to 128."""
    return max(sum(-(-t // ALIGNMENT) * ALIGNMENT for t in tokens), ALIGNMENT)


def layer_steps(name, chip="sm_90a"):
    """(inference step, training step) of a test layer."""
    groups, n, k, tokens = LAYERS[name]
    training = GroupedLinearStep("blockwise", m=padded_rows(tokens), groups=groups, n=n, k=k,
                                 chip=chip)
    return training.with_m(None), training


@dataclass(frozen=True)
class WeightQuantization:
    """A module quantizing expert weights [G, N, K] in 128x128 tiles, each
    expert on its own: the rowwise copy (fprop's) and each expert's
    transpose [G, K, N] (dgrad's), with their scales."""
    groups: int
    n: int
    k: int
    chip: str = "sm_90a"
    populate_args = "--suite grouped-linear"  # the cache-miss error's command

    def signature(self):
        return f"g{self.groups}-n{self.n}-k{self.k}"

    @property
    def cache_key(self):
        return f"expert-weight-quantize-{self.signature()}"

    def describe(self):
        return f"expert weight quantization G={self.groups} N={self.n} K={self.k}"

    def to_mlir(self):
        g, n, k = self.groups, self.n, self.k
        w = f"tensor<{g}x{n}x{k}xbf16>"
        rowwise = (f"tensor<{g}x{n}x{k}xf8E4M3FN>", f"tensor<{g}x{n // 128}x{k // 128}xf32>")
        columnwise = (f"tensor<{g}x{k}x{n}xf8E4M3FN>", f"tensor<{g}x{k // 128}x{n // 128}xf32>")
        named = zip(("rowwise", "rowwise_scale_inv", "columnwise", "columnwise_scale_inv"),
                    rowwise + columnwise)
        lines = [
            f"func.func @quantize(%w: {w} {{fp8.name = \"w\"}})",
            "    -> (" + ", ".join(f"{t} {{fp8.name = \"{r}\"}}" for r, t in named) + ") {",
            "  %q, %s, %qt, %st = fp8.quantize %w {recipe = #fp8.blockwise<>, "
            "granularity = #fp8.granularity<tile 128x128>}",
            f"      : {w} -> rowwise({', '.join(rowwise)}) columnwise({', '.join(columnwise)})",
            f"  return %q, %s, %qt, %st : {', '.join(rowwise + columnwise)}",
            "}"]
        return "\n".join(lines) + "\n"


def weight_quantizations(chip="sm_90a"):
    return [WeightQuantization(g, n, k, chip) for g, n, k in
            sorted({layer[:3] for layer in LAYERS.values()})]


def inference_steps(chip="sm_90a"):
    return [layer_steps(name, chip)[0] for name in LAYERS]


def training_steps(chip="sm_90a"):
    return [layer_steps(name, chip)[1] for name in LAYERS]


def all_modules(chip="sm_90a"):
    """Every module the GPU test loads, the training steps last (their
    weight-gradient kernel is the K-grouped GEMM)."""
    found = {}
    for spec in weight_quantizations(chip) + inference_steps(chip) + training_steps(chip):
        found.setdefault(spec.cache_key, spec)
    return list(found.values())

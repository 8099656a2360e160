"""Compiled modules with collective steps for the 2-GPU check
bench/dist_module.py: each case is one module holding ``sharded`` (the
program fp8-shard-quantize makes of an annotated input: the local slice,
the amax max-all-reduce, the quantization of the shard, the FP8
all-gather, on a grid of ``world`` devices) and ``whole`` (the same
quantization, or layer, on one device). Their results must be equal bit for
bit. No torch: ``compile_all`` runs on the build machine
(``fp8mlir.populate --suite dist``). ``TP_LAYERS``: whole training steps of a
linear layer in their tensor- or data-parallel form (fp8-shard-linear, run
with the build tree's fp8-opt) against the single-device step.
"""

from pathlib import Path

DIRECTORY = "dist-module"  # under the kernel cache


def _grid(world):
    return f"shard.grid @tp(shape = {world})\n"


def current(world, rows=4096, cols=1024, fp8="f8E4M3FN"):
    """Per-tensor current scaling of a sequence shard."""
    r = rows // world
    return _grid(world) + f"""
func.func @sharded(%x: tensor<{rows}x{cols}xbf16>) -> (tensor<{rows}x{cols}x{fp8}>, tensor<f32>) {{
  %r = shard.all_slice %x on @tp grid_axes = [0] slice_axis = 0 : tensor<{rows}x{cols}xbf16> -> tensor<{r}x{cols}xbf16>
  %a = fp8.amax %r : tensor<{r}x{cols}xbf16> -> tensor<f32>
  %g = shard.all_reduce %a on @tp grid_axes = [0] reduction = max : tensor<f32> -> tensor<f32>
  %s, %si = fp8.compute_scale %g {{element_type = {fp8}, recipe = #fp8.current<>}} : tensor<f32> -> tensor<f32>, tensor<f32>
  %q, %qs = fp8.quantize %r scale %s {{granularity = #fp8.granularity<tensor>, recipe = #fp8.current<>}} : tensor<{r}x{cols}xbf16>, tensor<f32> -> rowwise(tensor<{r}x{cols}x{fp8}>, tensor<f32>)
  %w = shard.all_gather %q on @tp grid_axes = [0] gather_axis = 0 : tensor<{r}x{cols}x{fp8}> -> tensor<{rows}x{cols}x{fp8}>
  return %w, %qs : tensor<{rows}x{cols}x{fp8}>, tensor<f32>
}}
func.func @whole(%x: tensor<{rows}x{cols}xbf16>) -> (tensor<{rows}x{cols}x{fp8}>, tensor<f32>) {{
  %q, %qs = fp8.quantize %x {{granularity = #fp8.granularity<tensor>, recipe = #fp8.current<>}} : tensor<{rows}x{cols}xbf16> -> rowwise(tensor<{rows}x{cols}x{fp8}>, tensor<f32>)
  return %q, %qs : tensor<{rows}x{cols}x{fp8}>, tensor<f32>
}}
"""


def delayed(world, rows=2048, cols=512):
    """Delayed scaling of an f32 weight shard: the given scale, the amax to
    record reduced over the grid."""
    r = rows // world
    q = "f8E4M3FN"
    recipe = "{granularity = #fp8.granularity<tensor>, recipe = #fp8.delayed<history = 16>}"
    return _grid(world) + f"""
func.func @sharded(%w: tensor<{rows}x{cols}xf32>, %scale: tensor<f32>) -> (tensor<{rows}x{cols}x{q}>, tensor<f32>, tensor<f32>) {{
  %r = shard.all_slice %w on @tp grid_axes = [0] slice_axis = 0 : tensor<{rows}x{cols}xf32> -> tensor<{r}x{cols}xf32>
  %q, %qs, %a = fp8.quantize %r scale %scale {recipe} : tensor<{r}x{cols}xf32>, tensor<f32> -> rowwise(tensor<{r}x{cols}x{q}>, tensor<f32>) amax(tensor<f32>)
  %g = shard.all_gather %q on @tp grid_axes = [0] gather_axis = 0 : tensor<{r}x{cols}x{q}> -> tensor<{rows}x{cols}x{q}>
  %m = shard.all_reduce %a on @tp grid_axes = [0] reduction = max : tensor<f32> -> tensor<f32>
  return %g, %qs, %m : tensor<{rows}x{cols}x{q}>, tensor<f32>, tensor<f32>
}}
func.func @whole(%w: tensor<{rows}x{cols}xf32>, %scale: tensor<f32>) -> (tensor<{rows}x{cols}x{q}>, tensor<f32>, tensor<f32>) {{
  %q, %qs, %a = fp8.quantize %w scale %scale {recipe} : tensor<{rows}x{cols}xf32>, tensor<f32> -> rowwise(tensor<{rows}x{cols}x{q}>, tensor<f32>) amax(tensor<f32>)
  return %q, %qs, %a : tensor<{rows}x{cols}x{q}>, tensor<f32>, tensor<f32>
}}
"""


def blockwise_weight(world, rows=1024, cols=512):
    """128x128 weight tiles on row shards of whole tiles: no amax
    reduction; data and tile scales gathered."""
    r = rows // world
    q = "f8E4M3FN"
    recipe = "{granularity = #fp8.granularity<tile 128x128>, recipe = #fp8.blockwise<>}"
    sr, sc, st = rows // 128, cols // 128, r // 128
    return _grid(world) + f"""
func.func @sharded(%w: tensor<{rows}x{cols}xbf16>) -> (tensor<{rows}x{cols}x{q}>, tensor<{sr}x{sc}xf32>) {{
  %r = shard.all_slice %w on @tp grid_axes = [0] slice_axis = 0 : tensor<{rows}x{cols}xbf16> -> tensor<{r}x{cols}xbf16>
  %q, %qs = fp8.quantize %r {recipe} : tensor<{r}x{cols}xbf16> -> rowwise(tensor<{r}x{cols}x{q}>, tensor<{st}x{sc}xf32>)
  %g = shard.all_gather %q on @tp grid_axes = [0] gather_axis = 0 : tensor<{r}x{cols}x{q}> -> tensor<{rows}x{cols}x{q}>
  %gs = shard.all_gather %qs on @tp grid_axes = [0] gather_axis = 0 : tensor<{st}x{sc}xf32> -> tensor<{sr}x{sc}xf32>
  return %g, %gs : tensor<{rows}x{cols}x{q}>, tensor<{sr}x{sc}xf32>
}}
func.func @whole(%w: tensor<{rows}x{cols}xbf16>) -> (tensor<{rows}x{cols}x{q}>, tensor<{sr}x{sc}xf32>) {{
  %q, %qs = fp8.quantize %w {recipe} : tensor<{rows}x{cols}xbf16> -> rowwise(tensor<{rows}x{cols}x{q}>, tensor<{sr}x{sc}xf32>)
  return %q, %qs : tensor<{rows}x{cols}x{q}>, tensor<{sr}x{sc}xf32>
}}
"""


def linear_fprop(world, tokens=4096, k=1024, n=2048):
    """A linear layer whose input is a sequence shard: what
    fp8-expand-linear + fp8-shard-quantize make of it (the FP8 all-gather
    feeds the fprop GEMM), against fp8.linear on one device."""
    r = tokens // world
    q = "f8E4M3FN"
    tensor = "#fp8.granularity<tensor>"
    return _grid(world) + f"""
func.func @sharded(%x: tensor<{tokens}x{k}xbf16>, %w: tensor<{n}x{k}xbf16>) -> tensor<{tokens}x{n}xbf16> {{
  %r = shard.all_slice %x on @tp grid_axes = [0] slice_axis = 0 : tensor<{tokens}x{k}xbf16> -> tensor<{r}x{k}xbf16>
  %a = fp8.amax %r : tensor<{r}x{k}xbf16> -> tensor<f32>
  %g = shard.all_reduce %a on @tp grid_axes = [0] reduction = max : tensor<f32> -> tensor<f32>
  %s, %si = fp8.compute_scale %g {{element_type = {q}, recipe = #fp8.current<>}} : tensor<f32> -> tensor<f32>, tensor<f32>
  %xq, %xs = fp8.quantize %r scale %s {{granularity = {tensor}, recipe = #fp8.current<>}} : tensor<{r}x{k}xbf16>, tensor<f32> -> rowwise(tensor<{r}x{k}x{q}>, tensor<f32>)
  %xg = shard.all_gather %xq on @tp grid_axes = [0] gather_axis = 0 : tensor<{r}x{k}x{q}> -> tensor<{tokens}x{k}x{q}>
  %wq, %ws = fp8.quantize %w {{granularity = {tensor}, recipe = #fp8.current<>}} : tensor<{n}x{k}xbf16> -> rowwise(tensor<{n}x{k}x{q}>, tensor<f32>)
  %y = fp8.scaled_matmul %xg, %wq, %xs, %ws {{a_granularity = {tensor}, accumulation = #fp8.accumulation<promoted(128)>, b_granularity = {tensor}, recipe = #fp8.current<>}} : (tensor<{tokens}x{k}x{q}>, tensor<{n}x{k}x{q}>, tensor<f32>, tensor<f32>) -> tensor<{tokens}x{n}xbf16>
  return %y : tensor<{tokens}x{n}xbf16>
}}
func.func @whole(%x: tensor<{tokens}x{k}xbf16>, %w: tensor<{n}x{k}xbf16>) -> tensor<{tokens}x{n}xbf16> {{
  %y = fp8.linear %x, %w {{recipe = #fp8.current<>}} : (tensor<{tokens}x{k}xbf16>, tensor<{n}x{k}xbf16>) -> tensor<{tokens}x{n}xbf16>
  return %y : tensor<{tokens}x{n}xbf16>
}}
"""


def _step(name, m, n, k, recipe):
    """A single-device training step of a linear layer: Y, dX, dW."""
    x, w, dy = f"tensor<{m}x{k}xbf16>", f"tensor<{n}x{k}xbf16>", f"tensor<{m}x{n}xbf16>"
    y, dw = f"tensor<{m}x{n}xbf16>", f"tensor<{n}x{k}xf32>"
    return f"""
func.func @{name}(%x: {x} {{fp8.name = "x"}}, %w: {w} {{fp8.name = "w"}}, %dy: {dy} {{fp8.name = "dy"}}) -> ({y} {{fp8.name = "y"}}, {x} {{fp8.name = "dx"}}, {dw} {{fp8.name = "dw"}}) {{
  %y = fp8.linear %x, %w {{recipe = {recipe}}} : ({x}, {w}) -> {y}
  %dx, %dw = fp8.linear_backward %x, %w, %dy {{recipe = {recipe}}} : ({x}, {w}, {dy}) -> ({x}, {dw})
  return %y, %dx, %dw : {y}, {x}, {dw}
}}
"""


# TP and ZeRO-1 layer steps (fp8-shard-linear), as (mode, recipe, M, N, K,
# f32 partials): partial sums (column dX, row Y) reduced in the layer's type
# (bf16), or in f32 and rounded once by a conversion kernel.
TP_LAYERS = {
    "tp_column_current": ("column", "#fp8.current<>", 2048, 1024, 1024, False),
    "tp_row_current": ("row", "#fp8.current<>", 2048, 1024, 1024, False),
    "dp_current": ("dp", "#fp8.current<>", 2048, 1024, 1024, False),
    "dp_blockwise": ("dp", "#fp8.blockwise<>", 2048, 1024, 1024, False),
    "tp_column_blockwise": ("column", "#fp8.blockwise<>", 2048, 1024, 1024, False),
    "tp_row_blockwise": ("row", "#fp8.blockwise<>", 2048, 1024, 1024, False),
    "tp_column_current_f32_partials": ("column", "#fp8.current<>", 2048, 1024, 1024, True),
    "tp_row_current_f32_partials": ("row", "#fp8.current<>", 2048, 1024, 1024, True),
    "tp_column_blockwise_f32_partials": ("column", "#fp8.blockwise<>", 2048, 1024, 1024, True),
    "tp_row_blockwise_f32_partials": ("row", "#fp8.blockwise<>", 2048, 1024, 1024, True),
}


def fp8_opt():
    """fp8-opt of the build tree next to libFP8CAPI.so ($FP8MLIR_OPT
    overrides)."""
    import os
    from .._capi import find_library
    override = os.environ.get("FP8MLIR_OPT")
    if override:
        return override
    library = find_library()
    tool = Path(library).parents[1] / "bin" / "fp8-opt" if library else None
    if tool is None or not tool.is_file():
        raise FileNotFoundError("fp8-opt not found next to libFP8CAPI.so: set FP8MLIR_OPT")
    return str(tool)


def tp_layer(world, mode, recipe, m, n, k, f32_partials=False):
    """``sharded``: what fp8-shard-linear makes of the single-device step on
    ``world`` devices (partial sums reduced in bf16, or with
    ``f32_partials`` in f32 and rounded once to bf16); ``whole``: the step
    on one device."""
    import subprocess
    step = _step("sharded", m, n, k, recipe)
    options = (f"mode={mode} world-size={world} "
               f"f32-partials={'true' if f32_partials else 'false'}")
    if mode == "dp":
        options += " grid=tp"
    out = subprocess.run([fp8_opt(), f"--fp8-shard-linear={options}", "-"], input=step,
                         capture_output=True, text=True, check=True).stdout
    body = out.strip()
    assert body.startswith("module {") and body.endswith("}"), body[:200]
    return body[len("module {"):-1] + _step("whole", m, n, k, recipe)


def cases(world):
    """{name: MLIR text}: the quantization cases, compared byte for byte."""
    return {"current_e4m3": current(world),
            "current_e5m2_odd_rows": current(world, rows=1000 * world, cols=768,
                                             fp8="f8E5M2"),
            "delayed_f32": delayed(world),
            "blockwise_128x128_weight": blockwise_weight(world),
            "linear_fprop_current": linear_fprop(world)}


def compile_all(cache, chip="sm_90a", world=2):
    """Compiles every case and TP layer into CACHE/dist-module/<world>/<name>/
    (module.json + kernels); returns the directories."""
    from ..module import compile_module_to
    out = []
    texts = dict(cases(world))
    texts.update({name: tp_layer(world, *spec) for name, spec in TP_LAYERS.items()})
    for name, text in texts.items():
        out.append(compile_module_to(text, chip, Path(cache) / DIRECTORY / str(world) / name))
    return out

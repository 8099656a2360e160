"""Which FP8 linear layer a benchmark builds: the pluggable part of
train_fp8.py and bench_linear.py.

A factory is called as ``factory(in_features, out_features, bias=..., recipe=...)``,
with ``format="e4m3"`` added for the runs named ``current-e4m3`` /
``delayed-e4m3`` (the per-tensor recipes with E4M3 gradients), and returns
an ``nn.Module`` with ``weight`` [out, in] (and ``bias``):
- ``torch``: fp8mlir.testing.torch_recipes.TorchFP8Linear (plain PyTorch);
- ``fp8mlir``: fp8mlir.nn.Linear (the compiled layer);
- ``--linear-factory module:function``: any function of that signature
  (the module is imported from the current directory or sys.path).
"""

import importlib
import os
import sys

IMPLS = ("torch", "fp8mlir")


class FactoryError(Exception):
    """A factory cannot be found or built: the message says why."""


def torch_factory(device=None, dtype=None):
    from fp8mlir.testing.torch_recipes import TorchFP8Linear

    def make(in_features, out_features, bias=False, recipe="current", format=None):  # noqa: A002
        options = {} if format is None else {"format": format}
        return TorchFP8Linear(in_features, out_features, bias=bias, recipe=recipe,
                              device=device, dtype=dtype, **options)
    make.label = "torch"
    make.description = "fp8mlir.testing.torch_recipes.TorchFP8Linear (plain PyTorch FP8)"
    return make


def fp8mlir_factory():
    try:
        nn = importlib.import_module("fp8mlir.nn")
        linear = nn.Linear
    except (ImportError, AttributeError) as e:
        raise FactoryError(
            f"--impl fp8mlir needs fp8mlir.nn.Linear, which this checkout does not have "
            f"({type(e).__name__}: {e}); use --impl torch, or --linear-factory module:function"
        ) from None

    def make(in_features, out_features, bias=False, recipe="current", format=None,  # noqa: A002
             main_grad=False):
        return linear(in_features, out_features, bias=bias, recipe=recipe, format=format,
                      main_grad=main_grad)
    make.label = "fp8mlir"
    make.description = "fp8mlir.nn.Linear"
    return make


def custom_factory(spec):
    module_name, sep, function_name = spec.partition(":")
    if not sep or not module_name or not function_name:
        raise FactoryError(f"--linear-factory {spec!r}: expected module:function")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise FactoryError(f"--linear-factory {spec!r}: cannot import {module_name}: {e}") from None
    function = getattr(module, function_name, None)
    if not callable(function):
        raise FactoryError(f"--linear-factory {spec!r}: {module_name} has no callable "
                           f"{function_name!r}")

    def make(in_features, out_features, bias=False, recipe="current", **options):
        return function(in_features, out_features, bias=bias, recipe=recipe, **options)
    make.label = spec
    make.description = f"{spec}(in_features, out_features, bias=..., recipe=...)"
    return make


def make_factory(impl, spec=None, device=None, dtype=None):
    """The factory of --impl / --linear-factory (which wins)."""
    if spec:
        return custom_factory(spec)
    if impl == "torch":
        return torch_factory(device, dtype)
    if impl == "fp8mlir":
        return fp8mlir_factory()
    raise FactoryError(f"unknown --impl {impl!r}: expected one of {IMPLS}")


def recipe_options(run):
    """{"recipe": ..., ["format": ...]} of a run name: "current-e4m3" is
    the current recipe with format e4m3."""
    from fp8mlir.linear_step import recipe_and_format
    recipe, fmt = recipe_and_format(run)
    return {"recipe": recipe} if fmt is None else {"recipe": recipe, "format": fmt}


def build(factory, recipe, like, device, dtype, **options):
    """factory's layer for `recipe` (a run name, see recipe_options) with
    the shape, weights and bias of the nn.Linear `like`, its parameters on
    `device` in `dtype` (buffers keep their dtype: delayed-scaling state
    stays f32); `options` go to the factory (fp8mlir's: main_grad=)."""
    import torch
    bias = like.bias is not None
    layer = factory(like.in_features, like.out_features, bias=bias, **recipe_options(recipe),
                    **options)
    if not isinstance(layer, torch.nn.Module):
        raise FactoryError(f"{factory.label} returned {type(layer).__name__}, not an nn.Module")
    weight = getattr(layer, "weight", None)
    if not isinstance(weight, torch.Tensor) or tuple(weight.shape) != tuple(like.weight.shape):
        raise FactoryError(f"{factory.label}: the layer's weight is "
                           f"{None if weight is None else tuple(weight.shape)}, expected "
                           f"{tuple(like.weight.shape)} (out_features, in_features)")
    layer.to(device)
    with torch.no_grad():
        for param in layer.parameters():
            if param.dtype != dtype:
                param.data = param.data.to(dtype)
        layer.weight.copy_(like.weight)
        if bias:
            layer.bias.copy_(like.bias)
    return layer

"""The TP/DP layer steps of the 2-GPU check bench/dist_module.py
(fp8mlir.testing.dist_module_cases.TP_LAYERS) compile on the build machine:
fp8-shard-linear's form of the step, with its strided collectives as copy2d
steps, and the single-device step, in one module."""

import json

import pytest

from fp8mlir.testing import dist_module_cases


def test_the_row_parallel_step_compiles_with_strided_collectives(tmp_path):
    from fp8mlir import compiler
    from fp8mlir.errors import CompilerUnavailableError
    from fp8mlir.module import compile_module_to
    try:
        compiler.supported_chips()
        text = dist_module_cases.tp_layer(2, *dist_module_cases.TP_LAYERS["tp_row_current"])
    except (CompilerUnavailableError, FileNotFoundError) as error:
        pytest.skip(f"no compiler: {error}")
    compile_module_to(text, "sm_90a", tmp_path)
    program = json.loads((tmp_path / "module.json").read_text())
    functions = {f["name"]: f for f in program["functions"]}
    sharded, whole = functions["sharded"], functions["whole"]
    kinds = [step["kind"] for step in sharded["steps"]]
    # X's and W's K-column slices, the columnwise dY gather put in place.
    assert kinds.count("copy2d") == 4
    assert [s.get("slice_group", {}).get("size") for s in sharded["steps"]
            if s["kind"] == "copy2d"] == [2, 2, None, None]
    assert {"all_gather", "reduce_scatter", "all_reduce"} <= set(kinds)
    assert not any(step["kind"] != "launch" and step["kind"] != "fill"
                   for step in whole["steps"])
    assert [r["shape"] for r in sharded["results"]] == [[1024, 1024], [2048, 512], [1024, 512]]


def test_f32_partial_sums_are_reduced_in_f32_then_converted(tmp_path):
    """f32-partials (fp8-shard-linear's default): the row-parallel Y is
    reduce-scattered in f32, then a conversion kernel rounds it once to
    bf16 into the result."""
    from fp8mlir import compiler
    from fp8mlir.errors import CompilerUnavailableError
    from fp8mlir.module import compile_module_to
    try:
        compiler.supported_chips()
        text = dist_module_cases.tp_layer(
            2, *dist_module_cases.TP_LAYERS["tp_row_current_f32_partials"])
    except (CompilerUnavailableError, FileNotFoundError) as error:
        pytest.skip(f"no compiler: {error}")
    compile_module_to(text, "sm_90a", tmp_path)
    program = json.loads((tmp_path / "module.json").read_text())
    sharded = {f["name"]: f for f in program["functions"]}["sharded"]
    steps = sharded["steps"]
    scatter = next(i for i, s in enumerate(steps) if s["kind"] == "reduce_scatter")
    assert steps[scatter]["dtype"] == "f32"
    convert = steps[scatter + 1]
    assert convert["kind"] == "launch" and convert["kernel"].startswith("fp8_convert_f32_bf16_")
    assert convert["operands"]["x"] == steps[scatter]["target"]
    assert convert["operands"]["y"] == sharded["results"][0]["name"]
    meta = json.loads((tmp_path / f"{convert['kernel']}.json").read_text())
    assert meta["kind"] == "convert" and meta["convert"]["out_dtype"] == "bf16"

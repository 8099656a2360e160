"""The host side of fp8mlir.nn.GroupedLinear, without torch or a GPU: the
step's MLIR text, validation, signatures and cache keys, the populate
suite, and (with the compiler library) the modules the GPU test loads."""

import json
import re

import pytest

from fp8mlir import _capi, ops, populate
from fp8mlir.grouped_linear_step import GroupedLinearStep
from fp8mlir.testing import grouped_linear_cases as cases


def test_step_text():
    text = GroupedLinearStep("blockwise", m=768, groups=4, n=256, k=384).to_mlir()
    assert "attributes {fp8.split_backward}" in text
    assert re.findall(r'fp8.name = "(\w+)"', text) == [
        "x", "w", "group_index", "group_sizes", "dy", "y", "dx", "dw"]
    assert "%w: tensor<4x256x384xbf16>" in text and "tensor<4x256x384xf32>" in text
    assert "groups(%group_index, %group_sizes)" in text
    inference = GroupedLinearStep("blockwise", m=None, groups=4, n=256, k=384).to_mlir()
    assert "split_backward" not in inference and "grouped_linear_backward" not in inference
    assert "%x: tensor<?x384xbf16>" in inference and "tensor<?xi32>" in inference


def test_step_validation():
    with pytest.raises(ValueError, match="blockwise recipe only"):
        GroupedLinearStep("current", m=128, groups=2, n=128, k=128)
    with pytest.raises(ValueError, match="sm_90a"):
        GroupedLinearStep("blockwise", m=128, groups=2, n=128, k=128, chip="sm_100a")
    with pytest.raises(ValueError, match="n = 200 is not a multiple of 128"):
        GroupedLinearStep("blockwise", m=128, groups=2, n=200, k=128)
    with pytest.raises(ValueError, match="m = 100 is not a multiple of 128"):
        GroupedLinearStep("blockwise", m=100, groups=2, n=128, k=128)
    with pytest.raises(ValueError, match="groups must be a positive integer"):
        GroupedLinearStep("blockwise", m=128, groups=0, n=128, k=128)


def test_signatures_and_keys():
    steps = [GroupedLinearStep("blockwise", m=m, groups=g, n=256, k=384, x_dtype=x)
             for m in (None, 512, 768) for g in (4, 8) for x in ("bf16", "f32")]
    assert len({s.cache_key for s in steps}) == len(steps)
    for s in steps:
        assert GroupedLinearStep.from_signature(s.signature(), s.m, s.chip) == s
    with pytest.raises(ValueError, match="not a grouped-linear signature"):
        GroupedLinearStep.from_signature("blockwise-n1", 128, "sm_90a")


def test_populate_suite_and_miss_message(tmp_path):
    args = populate.parse_args([str(tmp_path), "--suite", "grouped-linear"])
    keys = {s.cache_key for s in populate.steps_of(args)}
    assert keys == {s.cache_key for s in cases.all_modules()}
    spec = cases.layer_steps("uneven")[1]
    message = ops.missing_module_message(ops.KernelCache(tmp_path), spec)
    assert "--suite grouped-linear" in message and spec.cache_key in message


@pytest.mark.parametrize("spec", cases.weight_quantizations() + cases.inference_steps(),
                         ids=lambda s: s.cache_key)
def test_modules_compile(spec, tmp_path):
    """The weight quantization and forward modules of the GPU test compile;
    the forward quantizes the experts' weights in one launch."""
    if not _capi.available():
        pytest.skip("the compiler library is not built")
    from fp8mlir.module import compile_module_to
    compile_module_to(spec, spec.chip, tmp_path)
    program = json.loads((tmp_path / "module.json").read_text())
    (function,) = program["functions"]
    launches = [s["kernel"] for s in function["steps"] if s["kind"] == "launch"]
    batch = [k for k in launches if re.search(r"_128x128_.*_g\d+$", k)]
    assert len(batch) == 1, launches
    if isinstance(spec, GroupedLinearStep):
        assert any(k.startswith("fp8_grouped_gemm_blockwise") for k in launches), launches


@pytest.mark.parametrize("spec", cases.training_steps(), ids=lambda s: s.cache_key)
def test_training_steps_compile(spec, tmp_path):
    """The training steps of the GPU test compile into a forward (X's and the
    experts' weights' quantizations, fprop) and a backward (dY's
    quantization, the m_contiguous dgrad and the k_grouped wgrad)."""
    if not _capi.available():
        pytest.skip("the compiler library is not built")
    from fp8mlir.grouped_linear_step import BACKWARD, FORWARD
    from fp8mlir.module import compile_module_to
    compile_module_to(spec, spec.chip, tmp_path)
    program = json.loads((tmp_path / "module.json").read_text())
    launches = {f["name"]: [s["kernel"] for s in f["steps"] if s["kind"] == "launch"]
                for f in program["functions"]}
    assert set(launches) == {FORWARD, BACKWARD}, list(launches)
    forward, backward = launches[FORWARD], launches[BACKWARD]
    assert len(forward) == 3, forward
    assert len([k for k in forward if re.search(r"_128x128_.*_g\d+$", k)]) == 1, forward
    assert len([k for k in forward if k.startswith("fp8_grouped_gemm_blockwise")]) == 1, forward
    assert len(backward) == 3, backward
    assert len([k for k in backward if k.startswith("fp8_grouped_gemm_blockwise")]) == 1, backward
    assert len([k for k in backward if k.startswith("fp8_grouped_k_gemm_blockwise")]) == 1, \
        backward

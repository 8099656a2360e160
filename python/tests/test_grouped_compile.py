"""GroupedScaledMatmul through libFP8CAPI.so (no GPU): the kernel, its
metadata (the grouped operands) and the spec's checks."""

import pytest

import fp8mlir
from fp8mlir import CompileError, GroupedScaledMatmul
from fp8mlir.testing import grouped_cases, torch_ops_cases


@pytest.mark.parametrize("recipe, b_scale", [("tensorwise", [3]), ("rowwise", [3, 256]),
                                             ("blockwise", [3, 2, 4])])
def test_grouped_kernel_metadata(recipe, b_scale):
    kernel = fp8mlir.compile(GroupedScaledMatmul(recipe, groups=3, n=256, k=512),
                             chip="sm_90a")
    assert kernel.name.startswith(f"fp8_grouped_gemm_{recipe}_e4m3_e4m3_bf16_n256_k512_")
    assert kernel.name.endswith("_g3") or "_g3_" in kernel.name
    meta = kernel.metadata
    operands = {op["name"]: op for op in meta["operands"]}
    assert [op["name"] for op in meta["operands"]] == [
        "a", "b", "a_scale_inv", "b_scale_inv", "group_index", "d"]
    assert operands["b"]["shape"] == [3, 256, 512]
    assert operands["b_scale_inv"]["shape"] == b_scale
    assert operands["group_index"] == {"name": "group_index", "dtype": "i32", "shape": ["M"],
                                       "role": "input"}
    assert [p["name"] for p in meta["params"]][-2:] == ["group_index", "m"]
    tma_b = next(m for m in meta["tensor_maps"] if m["name"] == "tma_b")
    assert tma_b["dims"] == [512, 3 * 256]  # the stacked [G * N, K] view
    assert meta["gemm"]["groups"] == 3
    assert meta["gemm"]["group_layout"] == "m_contiguous"
    assert meta["gemm"]["cluster"] == [1, 1, 1]
    assert "variants" not in meta


def test_grouped_gemm_on_sm_100a_is_an_error():
    with pytest.raises(CompileError, match="grouped GEMMs have sm_90a kernels only"):
        fp8mlir.compile(GroupedScaledMatmul("rowwise", groups=2, n=256, k=512), chip="sm_100a")


@pytest.mark.parametrize("kwargs, message", [
    (dict(recipe="mxfp8"), "unknown recipe 'mxfp8'"),
    (dict(layout="m_masked"), "layout 'm_masked'"),
    (dict(groups=0), "groups must be a positive integer"),
    (dict(out_dtype="e4m3"), "out_dtype 'e4m3'"),
])
def test_grouped_spec_checks(kwargs, message):
    args = dict(recipe="rowwise", groups=2, n=256, k=512)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        GroupedScaledMatmul(**args)


def test_grouped_kernels_are_in_the_gpu_table():
    keys = {spec.cache_key for spec in torch_ops_cases.all_specs()}
    assert all(spec.cache_key in keys for spec in grouped_cases.all_specs())
    assert len({s.cache_key for s in grouped_cases.all_specs()}) == len(grouped_cases.all_specs())

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


@pytest.mark.parametrize("recipe, a_scale", [("tensorwise", []), ("rowwise", [3, "M"]),
                                             ("blockwise", [3, 4, "roundup(M, 4)"])])
def test_masked_kernel_metadata(recipe, a_scale):
    kernel = fp8mlir.compile(GroupedScaledMatmul(recipe, groups=3, n=256, k=512,
                                                 layout="m_masked"), chip="sm_90a")
    assert kernel.name.startswith(f"fp8_grouped_masked_gemm_{recipe}_e4m3_e4m3_bf16_n256_k512_")
    meta = kernel.metadata
    operands = {op["name"]: op for op in meta["operands"]}
    assert [op["name"] for op in meta["operands"]] == [
        "a", "b", "a_scale_inv", "b_scale_inv", "masked_m", "d"]
    assert operands["a"]["shape"] == [3, "M", 512]
    assert operands["a_scale_inv"]["shape"] == a_scale
    assert operands["masked_m"] == {"name": "masked_m", "dtype": "i32", "shape": [3],
                                    "role": "input"}
    assert operands["d"]["shape"] == [3, "M", 256]
    assert [p["name"] for p in meta["params"]][-2:] == ["masked_m", "m"]
    # D is stored directly (only the valid rows); A is a 3-D tensor map.
    assert "d" in [p["name"] for p in meta["params"]]
    tma_a = next(m for m in meta["tensor_maps"] if m["name"] == "tma_a")
    assert tma_a["dims"] == [512, "M", 3]
    assert tma_a["strides_bytes"] == [512, "M*512"]
    assert tma_a["box"][2] == 1
    assert meta["gemm"]["group_layout"] == "m_masked"
    assert "variants" not in meta


def test_masked_fp8mlir_signature():
    text = GroupedScaledMatmul("blockwise", groups=2, n=256, k=512, layout="m_masked").to_mlir()
    assert ("(%a: tensor<2x?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, "
            "%sa: tensor<2x?x4xf32>, %sb: tensor<2x2x4xf32>, %groups: tensor<2xi32>) "
            "-> tensor<2x?x256xbf16>") in text


def test_grouped_gemm_on_sm_100a_is_an_error():
    with pytest.raises(CompileError, match="grouped GEMMs have sm_90a kernels only"):
        fp8mlir.compile(GroupedScaledMatmul("rowwise", groups=2, n=256, k=512), chip="sm_100a")


@pytest.mark.parametrize("kwargs, message", [
    (dict(recipe="mxfp8"), "unknown recipe 'mxfp8'"),
    (dict(layout="k_grouped"), "layout 'k_grouped'"),
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


@pytest.mark.parametrize("layout, result_recipe, scale_shape", [
    ("m_contiguous", "blockwise", [2, "roundup(M, 4)"]),
    ("m_contiguous", "delayed", []),
    ("m_masked", "blockwise", [3, 2, "roundup(M, 4)"]),
    ("m_masked", "delayed", []),
])
def test_grouped_fp8_result_metadata(layout, result_recipe, scale_shape):
    """An FP8 D: its scale_inv after d (1x128: MN-major, per group with
    m_masked), the given scale before it (delayed)."""
    recipe = "blockwise" if result_recipe == "blockwise" else "rowwise"
    kernel = fp8mlir.compile(GroupedScaledMatmul(recipe, groups=3, n=256, k=512,
                                                 layout=layout, out_dtype="e4m3",
                                                 result_recipe=result_recipe),
                             chip="sm_90a")
    suffix = "_q1x128" if result_recipe == "blockwise" else "_qtensor"
    assert kernel.name.endswith(suffix) and "_e4m3_e4m3_e4m3_" in kernel.name
    meta = kernel.metadata
    operands = {op["name"]: op for op in meta["operands"]}
    names = [op["name"] for op in meta["operands"]]
    groups = "masked_m" if layout == "m_masked" else "group_index"
    given = ["result_scale"] if result_recipe == "delayed" else []
    assert names == ["a", "b", "a_scale_inv", "b_scale_inv", groups] + given + [
        "d", "result_scale_inv"]
    assert operands["result_scale_inv"]["shape"] == scale_shape
    assert operands["d"]["dtype"] == "e4m3"
    # m_contiguous stores through TMA; m_masked directly, guarded by the counts.
    params = [p["name"] for p in meta["params"]]
    assert ("tma_d" in params) == (layout == "m_contiguous")


def test_grouped_fp8_result_other_recipes_are_errors():
    text = GroupedScaledMatmul("rowwise", groups=2, n=256, k=512).to_mlir()
    text = text.replace("-> tensor<?x256xbf16>", "-> (tensor<?x256xf8E4M3FN>, tensor<?x1xf32>)")
    text = text.replace("%d = ", "%d, %ds = ").replace(
        "accumulation = #fp8.accumulation<fast>}",
        "accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.current<>, "
        "result_granularity = #fp8.granularity<row>}")
    text = text.replace("return %d : tensor<?x256xbf16>",
                        "return %d, %ds : tensor<?x256xf8E4M3FN>, tensor<?x1xf32>")
    with pytest.raises(CompileError, match="whose scales reduce over more than one tile"):
        fp8mlir.compile(text, chip="sm_90a")

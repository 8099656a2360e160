"""The parts of the PyTorch operators that run without torch or a GPU: the
quantization kernel specs and the output layouts the operators allocate
(checked against the compiled kernels' metadata), the kernel cache, the
GEMM requests of the C++ operators, and the recipe inference."""

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fp8mlir  # noqa: E402
from fp8mlir import _capi  # noqa: E402
from fp8mlir.ops import GemmRequest, KernelCache, evaluate_extent, gemm_spec, infer_recipe  # noqa: E402
from fp8mlir.quantization import DequantizeSpec, QuantizeSpec, scale_layout  # noqa: E402
from fp8mlir.testing import torch_ops_cases as cases  # noqa: E402

needs_compiler = pytest.mark.skipif(not _capi.available(), reason="libFP8CAPI.so not built")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The kernels of every quantize/dequantize spec of the GPU tests."""
    cache = KernelCache(tmp_path_factory.mktemp("kernels"))
    specs = [cases.quantize_spec(c) for c in cases.QUANTIZE_CASES] + cases.DEQUANTIZE_SPECS
    return {spec.cache_key: [json.loads(p.read_text()) for p in
                             map(Path, _as_list(cache.compile(spec, "sm_90a")))]
            for spec in specs}


def _as_list(paths):
    return paths if isinstance(paths, list) else [paths]


def _operand_shapes(metas, rows):
    """{operand name: shape at R = rows} over the kernels of one spec."""
    shapes = {}
    for meta in metas:
        for op in meta["operands"]:
            shapes[op["name"]] = tuple(evaluate_extent(e, {"R": rows}) for e in op["shape"])
    return shapes


@needs_compiler
@pytest.mark.parametrize("case", cases.QUANTIZE_CASES, ids=str)
@pytest.mark.parametrize("rows", [16, 201, 4096])
def test_quantize_outputs_have_the_kernels_shapes(compiled, case, rows):
    spec = cases.quantize_spec(case)
    shapes = _operand_shapes(compiled[spec.cache_key], rows)
    layouts = spec.output_layouts(rows)
    assert {name for name, _, _ in layouts} <= set(shapes)
    for name, shape, _ in layouts:
        assert tuple(shape) == shapes[name], name


@needs_compiler
@pytest.mark.parametrize("spec", cases.DEQUANTIZE_SPECS, ids=lambda s: s.cache_key)
@pytest.mark.parametrize("rows", [1, 127, 256])
def test_dequantize_scales_have_the_kernels_shape(compiled, spec, rows):
    shapes = _operand_shapes(compiled[spec.cache_key], rows)
    assert shapes["x"] == (rows, spec.cols) and shapes["y"] == (rows, spec.cols)
    assert tuple(scale_layout(spec.granularity, rows, spec.cols)[0]) == shapes["scale_inv"]


@needs_compiler
def test_current_scaling_runs_the_amax_kernel_first(tmp_path):
    cache = KernelCache(tmp_path)
    spec = QuantizeSpec("tensorwise", 256, columnwise=True)
    assert len(cache.compile(spec, "sm_90a")) == 2
    kinds = [json.loads(p.read_text())["kind"] for p in cache.lookup_all(spec, "sm_90a")]
    assert kinds == ["amax", "quantize"]
    # A GEMM spec is one kernel (its launch variants are not listed).
    gemm = fp8mlir.ScaledMatmul("rowwise", n=256, k=512, accumulation="fast")
    assert cache.compile(gemm, "sm_90a") == cache.lookup(gemm, "sm_90a")
    assert len(cache.lookup_all(gemm, "sm_90a")) == 1
    assert len(list(cache.path(gemm, "sm_90a").glob("*.json"))) > 1  # variants


def test_every_spec_has_its_own_cache_key():
    keys = [spec.cache_key for spec in cases.all_specs()]
    assert len(keys) == len(set(keys))
    variants = [QuantizeSpec("blockwise", 512, columnwise=True, transposed=t, block=b)
                for t in (True, False) for b in ((1, 128), (128, 128))]
    variants += [QuantizeSpec("delayed", 512, history=h) for h in (0, 16)]
    variants += [QuantizeSpec("tensorwise", 512, in_dtype=t, dtype=d)
                 for t in ("bf16", "f32") for d in ("e4m3", "e5m2")]
    assert len({v.cache_key for v in variants}) == len(variants)


def test_gpu_tests_may_use_only_the_table():
    """The table populate compiles is the one the GPU tests are held to
    (conftest.py): its specs pass, anything else names the table."""
    for spec in cases.all_specs():
        cases.check_in_table(spec)
    for name in ("blockwise-f32", "rowwise-f32", "tensorwise+bias"):
        cases.check_in_table(cases.TEST_GEMMS[name])
    for recipe in cases.BENCH_RECIPES:
        cases.check_in_table(cases.bench_gemm(recipe, cases.OVERHEAD_N, cases.OVERHEAD_K))
    with pytest.raises(cases.NotInTable, match="torch_ops_cases.py"):
        cases.check_in_table(fp8mlir.ScaledMatmul("blockwise", n=256, k=512, out_dtype="f16"))
    with pytest.raises(cases.NotInTable, match="dequantize-tensor-e4m3xbf16-c1024"):
        cases.check_in_table(DequantizeSpec("tensor", 1024))


def test_populate_compiles_the_table(monkeypatch, tmp_path):
    import test_gpu
    compiled = []
    monkeypatch.setattr(KernelCache, "compile",
                        lambda self, spec, chip: compiled.append((spec.cache_key, chip)))
    test_gpu.populate(tmp_path, "sm_90a")
    assert compiled == [(spec.cache_key, "sm_90a") for spec in cases.all_specs()]


@pytest.mark.parametrize("kwargs, message", [
    (dict(recipe="blockwise", dtype="e5m2"), "e4m3 only"),
    (dict(recipe="tensorwise", history=16), "delayed scaling"),
    (dict(recipe="tensorwise", rowwise=False), "rowwise or the columnwise"),
    (dict(recipe="mx"), "unknown quantization recipe"),
    (dict(recipe="blockwise", block=(1, 32)), "expected one of"),
    (dict(recipe="rowwise", in_dtype="e4m3"), "in_dtype"),
])
def test_quantize_spec_rejects_what_no_kernel_does(kwargs, message):
    with pytest.raises(ValueError, match=message):
        QuantizeSpec(cols=512, **kwargs)


def test_dequantize_spec_rejects_unknown_granularity():
    with pytest.raises(ValueError, match="unknown granularity"):
        DequantizeSpec("tile 1x32", 512)


def test_scale_layouts_are_torchs():
    assert scale_layout("tensor", 5, 300) == ((), "scalar")
    assert scale_layout("row", 5, 300) == ((5, 1), "dense")
    # MN-major [ceil(C/128), roundup(R, 4)], viewed as (R, ceil(C/128)).
    assert scale_layout("tile 1x128", 5, 300) == ((3, 8), "mn_major")
    assert scale_layout("tile 128x128", 300, 129) == ((3, 2), "dense")


def test_metadata_extents_evaluate():
    symbols = {"R": 201, "M": 5}
    assert evaluate_extent(7, symbols) == 7
    assert evaluate_extent("M", symbols) == 5
    assert evaluate_extent("roundup(R, 4)", symbols) == 204
    assert evaluate_extent("ceildiv(R, 128)", symbols) == 2


def test_gemm_requests_name_their_spec():
    request = GemmRequest(device=0, recipe=2, a_dtype=0, b_dtype=1, out_dtype=5,
                          bias_dtype=3, n=4096, k=7168, accumulation=128)
    spec = gemm_spec(request)
    assert spec == fp8mlir.ScaledMatmul("blockwise", n=4096, k=7168, out_dtype="f32",
                                        accumulation="promoted(128)", a_dtype="e4m3",
                                        b_dtype="e5m2", bias_dtype="bf16")
    fast = gemm_spec(GemmRequest(recipe=0, a_dtype=0, b_dtype=0, out_dtype=3, bias_dtype=-1,
                                 n=256, k=512, accumulation=0))
    assert fast.accumulation == "fast" and fast.bias_dtype is None
    assert GemmRequest.n.offset == 24 and GemmRequest.accumulation.offset == 40
    with pytest.raises(ValueError, match="recipe code"):
        gemm_spec(GemmRequest(recipe=7, n=1, k=1))


def _scale(*shape):
    numel = 1
    for extent in shape:
        numel *= extent
    return SimpleNamespace(shape=shape, numel=lambda: numel)


@pytest.mark.parametrize("sa, sb, recipe", [
    (_scale(), _scale(1), "tensorwise"),
    (_scale(64, 1), _scale(1, 256), "rowwise"),
    (_scale(64), _scale(256, 1), "rowwise"),
    (_scale(64, 5), _scale(5, 2), "blockwise"),
])
def test_recipe_is_read_from_the_scale_shapes(sa, sb, recipe):
    assert infer_recipe(sa, sb, 64, 256, 640) == recipe


def test_unknown_scale_shapes_are_an_error():
    with pytest.raises(ValueError, match=r"cannot tell the recipe from scale_a \(7, 3\)"):
        infer_recipe(_scale(7, 3), _scale(1), 64, 256, 640)


def test_the_package_imports_torch_only_for_the_operators():
    assert "fp8mlir._torch_ops" not in sys.modules
    assert isinstance(fp8mlir.QuantizedTensor(None, None, None, None, "rowwise"), tuple)

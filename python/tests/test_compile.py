"""fp8mlir.compile through libFP8CAPI.so: kernels, options and diagnostics."""

import json

import pytest

import fp8mlir
from fp8mlir import CompileError, ScaledMatmul


def test_rowwise_gemm_compiles_to_one_kernel_for_sm_90a():
    kernel = fp8mlir.compile(ScaledMatmul("rowwise", n=256, k=512), chip="sm_90a")
    assert f".entry {kernel.name}" in kernel.ptx
    assert ".target sm_90a" in kernel.ptx
    meta = kernel.metadata
    assert meta["format"] == "fp8-mlir-kernel"
    assert meta["entry"] == kernel.name
    assert meta["chip"] == "sm_90a"
    assert meta["ptx"] == f"{kernel.name}.ptx"


def test_mxfp8_compiles_for_sm_100a():
    kernel = fp8mlir.compile(ScaledMatmul("mxfp8", n=256, k=512), chip="sm_100a")
    assert "tcgen05.mma" in kernel.ptx
    assert kernel.metadata["chip"] == "sm_100a"


def test_text_source_and_save(tmp_path):
    text = ScaledMatmul("tensorwise", n=128, k=256, accumulation="fast").to_mlir()
    kernel = fp8mlir.compile(text, chip="sm_90a")
    json_path = kernel.save(tmp_path)
    assert json.loads(json_path.read_text())["entry"] == kernel.name
    assert (tmp_path / f"{kernel.name}.ptx").read_text() == kernel.ptx


def test_gemm_config_option_overrides_the_tile():
    default = fp8mlir.compile(ScaledMatmul("tensorwise", n=256, k=512), chip="sm_90a")
    forced = fp8mlir.compile(ScaledMatmul("tensorwise", n=256, k=512), chip="sm_90a",
                             gemm_config="#fp8.gemm_config<tile = 128x64x128, stages = 3>")
    assert forced.metadata["gemm"]["tile"][:2] == [128, 64]
    assert forced.metadata["gemm"]["tile"] != default.metadata["gemm"]["tile"]


def test_mxfp8_on_sm_90a_is_a_compile_error():
    with pytest.raises(CompileError) as info:
        fp8mlir.compile(ScaledMatmul("mxfp8", n=256, k=512), chip="sm_90a")
    errors = [d for d in info.value.diagnostics if d.severity == "error"]
    assert errors and "MXFP8" in errors[0].message and "sm_90a" in errors[0].message


def test_supported_chips_come_from_the_compiler():
    assert fp8mlir.supported_chips() == ("sm_90a", "sm_100a")


def test_module_target_is_the_default_chip():
    target = ('#fp8.target<chip = "sm_100a", sm_count = 148, '
              'max_shared_memory_per_block = 232448, ptx_features = "+ptx88">')
    body = ScaledMatmul("rowwise", n=128, k=256).to_mlir()
    kernel = fp8mlir.compile(f"module attributes {{fp8.target = {target}}} {{\n{body}\n}}")
    assert kernel.chip == "sm_100a"


def test_no_chip_and_no_target_is_an_exception():
    with pytest.raises(CompileError) as info:
        fp8mlir.compile(ScaledMatmul("rowwise", n=128, k=256))
    assert any("no target chip" in d.message for d in info.value.diagnostics)


@pytest.mark.parametrize("chip", ["sm_42", "sm_90", "sm_100a;+ptx60"])
def test_unknown_chip_is_an_exception_not_a_crash(chip):
    with pytest.raises(CompileError) as info:
        fp8mlir.compile(ScaledMatmul("rowwise", n=128, k=256), chip=chip)
    assert any("unknown chip" in d.message for d in info.value.diagnostics)
    # The interpreter and the compiler are still usable.
    assert fp8mlir.compile(ScaledMatmul("rowwise", n=128, k=256), chip="sm_90a").ptx


def test_opt_level_out_of_range_is_an_exception():
    with pytest.raises(CompileError, match="optimization level 7"):
        fp8mlir.compile(ScaledMatmul("rowwise", n=128, k=256), opt_level=7)


def test_parse_error_carries_its_location():
    with pytest.raises(CompileError) as info:
        fp8mlir.compile("func.func @f() {\n  %x = fp8.bogus\n}\n", source_name="bad.mlir")
    diag = info.value.diagnostics[0]
    assert diag.severity == "error"
    assert diag.location.startswith("bad.mlir:2:")
    assert "bad.mlir:2:" in str(info.value)


def test_verifier_error_is_reported_with_its_note():
    bad = ScaledMatmul("blockwise", n=256, k=512).to_mlir().replace(
        "promoted(128)", "fast")
    with pytest.raises(CompileError) as info:
        fp8mlir.compile(bad)
    assert info.value.diagnostics[0].location.startswith("<fp8mlir>:")


def test_bad_gemm_config_text_is_an_exception():
    with pytest.raises(CompileError, match="gemm_config"):
        fp8mlir.compile(ScaledMatmul("rowwise", n=128, k=256), chip="sm_90a",
                        gemm_config="#fp8.blockwise<>")


def test_module_without_kernels_is_an_exception():
    with pytest.raises(CompileError, match="nothing to compile"):
        fp8mlir.compile("func.func @f() { return }", chip="sm_90a")


def test_builder_rejects_bad_arguments():
    with pytest.raises(ValueError):
        ScaledMatmul("colwise", n=128, k=256)
    with pytest.raises(ValueError):
        ScaledMatmul("rowwise", n=0, k=256)
    with pytest.raises(TypeError):
        fp8mlir.compile(42)


@pytest.mark.parametrize("result_recipe,dtype,suffix,scale_operand", [
    ("blockwise", "e4m3", "_q1x128", "result_scale_inv"),
    ("delayed", "e5m2", "_qtensor", "result_scale"),
])
def test_fp8_output_gemm_compiles_to_one_kernel(result_recipe, dtype, suffix, scale_operand):
    spec = ScaledMatmul("blockwise" if result_recipe == "blockwise" else "tensorwise",
                        n=256, k=512, out_dtype=dtype, result_recipe=result_recipe,
                        accumulation="promoted(128)" if result_recipe == "blockwise" else "fast",
                        config="<tile = 128x128x128>")
    kernel = fp8mlir.compile(spec, chip="sm_90a")
    assert kernel.name.endswith(suffix)
    names = [o["name"] for o in kernel.metadata["operands"]]
    assert names[-2:] == ["d", "result_scale_inv"] and scale_operand in names
    assert kernel.metadata["gemm"]["out_dtype"] == dtype


def test_fp8_output_needs_a_result_recipe():
    with pytest.raises(ValueError, match="out_dtype 'e4m3'"):
        ScaledMatmul("tensorwise", n=256, k=512, out_dtype="e4m3")


def test_for_m_names_the_kernel_a_launch_runs(runtime_library, tmp_path):
    """Kernel.for_m (fp8rt_kernel_for_m): a kernel without launch variants
    runs itself for any M without asking the driver; the rows are checked
    before it is asked (which variant runs is a GPU test's)."""
    from fp8mlir import _runtime
    configured = fp8mlir.compile(ScaledMatmul("tensorwise", n=256, k=512,
                                              config="<tile = 128x128x128>"), chip="sm_90a")
    dynamic = fp8mlir.compile(ScaledMatmul("tensorwise", n=256, k=512), chip="sm_90a")
    assert dynamic.variants and not configured.variants
    with _runtime.Kernel(configured.save(tmp_path / "configured"), runtime_library) as kernel:
        assert kernel.for_m(1) is kernel and kernel.for_m(4096) is kernel
    with _runtime.Kernel(dynamic.save(tmp_path / "dynamic"), runtime_library) as kernel:
        with pytest.raises(RuntimeError, match="m = 0: expected the problem's rows, at least 1"):
            kernel.for_m(0)


@pytest.mark.parametrize("m", [16, 33, 64])
def test_a_static_m_module_loads(runtime_library, tmp_path, m):
    """A static M takes no stream-K kernel (the runtime's choice at M = 16
    and 64 for 2112x7168): a module function cannot give one the workspace
    the runtime owns, so fp8rt_module_load would refuse the module."""
    from fp8mlir.module import compile_module
    text = ScaledMatmul("blockwise", n=2112, k=7168).to_mlir().replace("?x", f"{m}x")
    module = compile_module(text, "sm_90a", tmp_path, runtime_library)
    try:
        for path in tmp_path.glob("fp8_gemm_*.json"):
            params = json.loads(path.read_text()).get("params", [])
            assert all(p.get("kind") != "workspace" for p in params), path.name
    finally:
        module.close()

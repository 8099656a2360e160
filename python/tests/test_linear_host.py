"""The host side of fp8mlir.nn.Linear, without torch or a GPU: the training
step's MLIR text, the cache keys and signatures, the cache-miss error and the
populate command it names, module loading and introspection through the
runtime (stub kernels), and extents."""

import json
import os
import re

import pytest

import fp8mlir
from fp8mlir import _capi, ops, populate
from fp8mlir.errors import CompilerUnavailableError
from fp8mlir.linear_step import LinearStep
from fp8mlir.module import evaluate, load_module
from fp8mlir.testing import linear_cases


def test_step_text_names_every_argument_and_result():
    text = LinearStep("delayed", m=336, n=384, k=256, bias_dtype="f32", main_grad=True,
                      w_dtype="f32", history=16).to_mlir()
    assert "attributes {fp8.split_backward}" in text
    names = re.findall(r'fp8.name = "(\w+)"', text)
    assert names == ["x", "w", "bias", "dy", "main_grad", "x_scale", "w_scale", "dy_scale",
                     "x_history", "w_history", "dy_history", "y", "dx", "dw", "x_scale_next",
                     "w_scale_next", "dy_scale_next", "x_history_next", "w_history_next",
                     "dy_history_next"]
    assert "%x: tensor<336x256xbf16>" in text and "%w: tensor<384x256xf32>" in text
    assert "accumulate_into %main_grad" in text
    assert "#fp8.delayed<history = 16>" in text
    assert "element_type = f8E5M2" in text  # dY's scale: the gradient format
    plain = LinearStep("current", m=128, n=256, k=512).to_mlir()
    assert "bias" not in plain and "main_grad" not in plain and "scales(" not in plain


def test_step_text_format_e4m3():
    """format e4m3: the recipe attribute carries it, and the delayed dY
    scale is computed for E4M3; hybrid is the default, spelled nowhere."""
    current = LinearStep("current", m=128, n=256, k=512, format="e4m3").to_mlir()
    assert current.count("{recipe = #fp8.current<format = e4m3>}") == 2
    delayed = LinearStep("delayed", m=128, n=256, k=512, history=16, format="e4m3").to_mlir()
    assert "#fp8.delayed<history = 16, format = e4m3>" in delayed
    assert "f8E5M2" not in delayed
    assert re.search(r"%dy_scale_next.*element_type = f8E4M3FN", delayed)
    assert LinearStep("current", m=128, n=256, k=512, format="hybrid") == \
        LinearStep("current", m=128, n=256, k=512)
    hybrid = LinearStep("delayed", m=128, n=256, k=512, history=16).to_mlir()
    assert "format" not in hybrid and "#fp8.delayed<history = 16>" in hybrid
    assert "#fp8.blockwise<>" in LinearStep("blockwise", m=128, n=256, k=512).to_mlir()


def test_step_format_validation():
    with pytest.raises(ValueError, match="unknown format 'e5m2' for recipe 'current'"):
        LinearStep("current", m=128, n=128, k=128, format="e5m2")
    for recipe, chip in (("blockwise", "sm_90a"), ("mxfp8", "sm_100a")):
        for fmt in ("e4m3", "hybrid"):
            with pytest.raises(ValueError, match=f"only the per-tensor recipes .*not {recipe}"):
                LinearStep(recipe, m=128, n=128, k=128, chip=chip, format=fmt)
    # The inference forward quantizes no dY: one module for every format.
    e4m3 = LinearStep("delayed", m=336, n=384, k=256, format="e4m3")
    assert e4m3.with_m(None) == LinearStep("delayed", m=None, n=384, k=256)
    assert LinearStep("current", m=None, n=384, k=256, format="e4m3").format == "hybrid"


@pytest.mark.parametrize("recipe", ["current", "delayed", "blockwise", "current-e4m3",
                                    "delayed-e4m3"])
def test_step_text_compiles(recipe):
    """The text parses and compiles (the step's kernels) with this compiler."""
    if not _capi.available():
        pytest.skip("the compiler library is not built")
    for m in (336, None):
        step = linear_cases.step(recipe, m, 384, 256, bias_dtype="bf16", w_dtype="f32")
        kernels = fp8mlir.compile_all(step.to_mlir(), "sm_90a")
        assert any(k.name.startswith("fp8_gemm_") for k in kernels)
        assert any("quantize" in k.name for k in kernels)
        if recipe.endswith("-e4m3") and m is not None:  # dgrad, wgrad: E4M3 x E4M3
            gemms = [k.name for k in kernels if k.name.startswith("fp8_gemm_")]
            assert len(gemms) == 3 and all("_e4m3_e4m3_" in g for g in gemms), gemms


@pytest.mark.parametrize("recipe, in_place", [("blockwise", True), ("current", False)])
def test_main_grad_is_updated_in_place_where_the_wgrad_kernel_can(recipe, in_place):
    """The GPU tests' main-grad layer: on sm_90a the blockwise backward's dW
    is its main_grad argument (the wgrad GEMM adds into it: C and D bound to
    it, a kernel whose d is in_place_of c); the per-tensor one returns
    main_grad + dW in a new tensor, which the layer copies back."""
    if not _capi.available():
        pytest.skip("the compiler library is not built")
    step = linear_cases.layer_step("main_grad", recipe)
    kernels, text = fp8mlir.compiler.compile_module_program(step.to_mlir(), "sm_90a")
    backward = next(f for f in json.loads(text)["functions"] if f["name"] == "linear_backward")
    dw = next(r for r in backward["results"] if r["name"] == "dw")
    main_grad = next(a for a in backward["arguments"] if a["name"] == "main_grad")
    (wgrad,) = [s for s in backward["steps"] if "c" in s.get("operands", {})]
    assert wgrad["operands"]["c"] == "main_grad"
    metadata = next(k.metadata for k in kernels if k.name == wgrad["kernel"])
    d = next(o for o in metadata["operands"] if o["name"] == "d")
    if in_place:
        assert dw.get("alias_of") == "main_grad" and main_grad.get("written")
        assert wgrad["operands"]["d"] == "main_grad" and d.get("in_place_of") == "c"
    else:
        assert "alias_of" not in dw and not main_grad.get("written")
        assert wgrad["operands"]["d"] == "dw" and "in_place_of" not in d


def test_step_validation():
    with pytest.raises(ValueError, match="mxfp8.*sm_100a"):
        LinearStep("mxfp8", m=128, n=128, k=128, chip="sm_90a")
    with pytest.raises(ValueError, match="unknown recipe"):
        LinearStep("tensorwise", m=128, n=128, k=128)
    with pytest.raises(ValueError, match="m must be a positive integer"):
        LinearStep("current", m=0, n=128, k=128)
    with pytest.raises(ValueError, match="bias_dtype"):
        LinearStep("current", m=16, n=128, k=128, bias_dtype="f16")
    with pytest.raises(ValueError, match="x_dtype"):
        LinearStep("current", m=16, n=128, k=128, x_dtype="e4m3")


def test_signatures_round_trip_and_keys_differ():
    variants = [LinearStep("current", m=336, n=384, k=256),
                LinearStep("current", m=352, n=384, k=256),
                LinearStep("current", m=336, n=384, k=256, bias_dtype="bf16"),
                LinearStep("current", m=336, n=384, k=256, bias_dtype="f32"),
                LinearStep("current", m=336, n=384, k=256, w_dtype="f32"),
                LinearStep("current", m=336, n=384, k=256, main_grad=True),
                LinearStep("delayed", m=336, n=384, k=256),
                LinearStep("delayed", m=336, n=384, k=256, history=16),
                LinearStep("current", m=336, n=384, k=256, format="e4m3"),
                LinearStep("delayed", m=336, n=384, k=256, history=16, format="e4m3"),
                LinearStep("blockwise", m=336, n=256, k=384),
                LinearStep("mxfp8", m=336, n=256, k=384, chip="sm_100a")]
    assert len({v.cache_key for v in variants}) == len(variants)
    for v in variants:
        assert LinearStep.from_signature(v.signature(), v.m, v.chip) == v
    with pytest.raises(ValueError, match="not a linear-step signature"):
        LinearStep.from_signature("current-n1", 16, "sm_90a")


@pytest.mark.parametrize("m", [208, None])
def test_cache_miss_without_compiler_names_module_and_command(tmp_path, monkeypatch, m):
    monkeypatch.setattr(ops, "module_compiler_available", lambda: False)
    step = LinearStep("blockwise", m=m, n=256, k=512, w_dtype="f32", bias_dtype="f32")
    with pytest.raises(CompilerUnavailableError) as error:
        ops.KernelCache(tmp_path).module(step)
    message = str(error.value)
    assert step.cache_key in message and str(tmp_path) in message
    command = re.search(r"-m fp8mlir\.populate (.*)", message).group(1).split()
    args = populate.parse_args(command)
    assert args.cache == str(tmp_path) and populate.steps_of(args) == [step]


def test_inference_step_text():
    step = LinearStep("delayed", m=None, n=384, k=256, bias_dtype="bf16")
    text = step.to_mlir()
    assert "fp8.split_backward" not in text and "linear_backward" not in text
    assert "%x: tensor<?x256xbf16>" in text and "-> (tensor<?x384xbf16> {fp8.name = \"y\"})" in text
    assert "scales(%x_scale, %w_scale)" in text
    assert step.cache_key.endswith("-inference")
    training = LinearStep("delayed", m=336, n=384, k=256, bias_dtype="bf16", main_grad=True)
    assert training.with_m(None) == step
    with pytest.raises(ValueError, match="no main gradient"):
        LinearStep("current", m=None, n=128, k=128, main_grad=True)


def test_populate_suites_cover_the_tests_and_benchmarks():
    args = populate.parse_args(["cache"])
    keys = {s.cache_key for s in populate.steps_of(args)}
    assert {s.cache_key for s in linear_cases.gpu_test_steps()} <= keys
    # bench/train_fp8.py's default model: hidden 2048, SwiGLU 5632, 16 x 1024
    # tokens, f32 master weights.
    for n, k in ((6144, 2048), (2048, 2048), (11264, 2048), (2048, 5632)):
        for recipe in ("current", "delayed", "blockwise"):
            assert LinearStep(recipe, m=16384, n=n, k=k, w_dtype="f32").cache_key in keys
    # bench/bench_linear.py: IN x OUT 8192x28672 at 4096 tokens, bf16.
    assert LinearStep("blockwise", m=4096, n=28672, k=8192).cache_key in keys
    smaller = populate.steps_of(populate.parse_args(
        ["cache", "--suite", "train", "--train-args", "--hidden 1024 --seq 100 --batch 3 "
         "--recipes bf16,current"]))
    assert {s.m for s in smaller} == {304, None} and {s.recipe for s in smaller} == {"current"}
    assert {s.k for s in smaller} == {1024, 2816}
    e4m3 = populate.steps_of(populate.parse_args(
        ["cache", "--suite", "train", "--train-args", "--hidden 1024 --seq 100 --batch 3 "
         "--recipes bf16,current,delayed-e4m3"]))
    # The e4m3 run's training steps; its inference forwards are delayed's.
    assert {(s.recipe, s.format, s.m) for s in e4m3} == {
        ("current", "hybrid", 304), ("current", "hybrid", None), ("delayed", "e4m3", 304),
        ("delayed", "hybrid", None)}
    assert len(e4m3) == 4 * 4
    # The GPU tests run the per-tensor recipes with format e4m3 too.
    assert {(s.recipe, s.format) for s in linear_cases.gpu_test_steps() if s.m} >= {
        ("current", "e4m3"), ("delayed", "e4m3")}


def test_padded_token_counts():
    assert [linear_cases.padded(t) for t in (1, 16, 200, 336)] == [16, 16, 208, 336]
    assert linear_cases.layer_step("padded", "current").m == 208


def test_dedupe_hard_links_identical_files(tmp_path):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "k.ptx").write_text("same kernel")
    (tmp_path / "b" / "other.ptx").write_text("another")
    assert populate.dedupe(tmp_path) == len("same kernel")
    assert (tmp_path / "a" / "k.ptx").samefile(tmp_path / "b" / "k.ptx")
    assert populate.disk_bytes(tmp_path) == len("same kernel") + len("another")


def test_extents():
    symbols = {"x_0": 200, "n": 3}
    assert evaluate(7, symbols) == 7
    assert evaluate("x_0", symbols) == 200
    assert evaluate("ceildiv(x_0, 128)", symbols) == 2
    assert evaluate("roundup(x_0, 128)*n + 16", symbols) == 784
    with pytest.raises(ValueError, match="cannot evaluate"):
        evaluate("x_0 - 1", symbols)
    with pytest.raises(ValueError, match="cannot evaluate"):
        evaluate("y", symbols)


# --- a module through the runtime: stub kernels, no driver -----------------------

def _ptx(entry, params):
    lines = ",\n".join(f"\t.param {p} {entry}_param_{i}" for i, p in enumerate(params))
    return (f".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry {entry}(\n"
            f"{lines}\n)\n{{\n\tret;\n}}\n")


def _kernel(directory, name, kind, operands, grid):
    params = [{"name": o["name"], "kind": "pointer", "operand": o["name"]} for o in operands]
    params.append({"name": "r", "kind": "i32", "value": "R"})
    meta = {"format": "fp8-mlir-kernel", "version": 1, "name": name, "entry": name,
            "chip": "sm_90a", "kind": kind, "ptx": f"{name}.ptx", "block": [256, 1, 1],
            "dynamic_shared_memory_bytes": 0, "grid": grid, "operands": operands,
            "params": params}
    (directory / f"{name}.json").write_text(json.dumps(meta))
    (directory / f"{name}.ptx").write_text(_ptx(name, [".u64"] * len(operands) + [".u32"]))


def _operand(name, dtype, shape, role, alignment):
    return {"name": name, "dtype": dtype, "shape": shape, "role": role, "alignment": alignment}


@pytest.fixture
def module_dir(tmp_path):
    try:
        from fp8mlir import _runtime
        _runtime.find_library()
    except FileNotFoundError:
        pytest.skip("libfp8rt.so is not built")
    _kernel(tmp_path, "amax", "amax", [_operand("x", "bf16", ["R", 256], "input", 16),
                                       _operand("amax", "f32", [], "output", 4)],
            {"kind": "fixed", "dims": [132, 1, 1]})
    _kernel(tmp_path, "cast", "quantize", [
        _operand("x", "bf16", ["R", 256], "input", 16),
        _operand("amax", "f32", [], "input", 4),
        _operand("q", "e4m3", ["R", 256], "output", 16),
        _operand("q_scale_inv", "f32", [], "output", 4)],
        {"kind": "tiles", "tile_m": 128, "tile_n": 128, "operand": "q"})
    program = {
        "format": "fp8-mlir-module", "version": 1, "chip": "sm_90a", "kernels": ["amax", "cast"],
        "functions": [{
            "name": "quantize_x",
            "symbols": [{"name": "x_0", "argument": "x", "dim": 0}],
            "arguments": [{"name": "x", "dtype": "bf16", "shape": ["x_0", 256], "alignment": 16}],
            "results": [{"name": "q", "dtype": "e4m3", "shape": ["x_0", 256], "alignment": 16},
                        {"name": "q_scale_inv", "dtype": "f32", "shape": [], "alignment": 4}],
            "buffers": [{"name": "amax", "dtype": "f32", "shape": [], "bytes": 4,
                         "alignment": 256, "offset": 0}],
            "workspace_bytes": 256,
            "steps": [{"kind": "fill", "target": "amax", "byte": 0},
                      {"kind": "launch", "kernel": "amax", "operands": {"x": "x", "amax": "amax"},
                       "symbols": {"R": "x_0"}},
                      {"kind": "launch", "kernel": "cast",
                       "operands": {"x": "x", "amax": "amax", "q": "q",
                                    "q_scale_inv": "q_scale_inv"},
                       "symbols": {"R": "x_0"}}]}]}
    (tmp_path / "module.json").write_text(json.dumps(program))
    return tmp_path


def test_load_module_introspection(module_dir):
    m = load_module(module_dir)
    assert m.chip == "sm_90a" and list(m.functions) == ["quantize_x"]
    fn = m.quantize_x
    assert fn is m["quantize_x"] and fn.name == "quantize_x"
    assert fn.argument_names == ("x",) and fn.result_names == ("q", "q_scale_inv")
    assert fn.symbols == ("x_0",)
    (x,) = fn.arguments
    assert (x.dtype, x.shape, x.alignment, x.written) == ("bf16", ("x_0", 256), 16, False)
    assert [r.alias_of for r in fn.results] == [None, None]
    assert fn.result_shapes(fn.bind_symbols([(200, 256)])) == [(200, 256), ()]
    assert fn.workspace_bytes(x_0=200) == 256
    with pytest.raises(KeyError, match="no function 'nope'.*quantize_x"):
        m["nope"]
    with pytest.raises(RuntimeError, match="x_1|symbol"):
        fn.workspace_bytes(x_1=3)


def test_load_module_errors_carry_the_runtime_message(module_dir):
    program = json.loads((module_dir / "module.json").read_text())
    program["functions"][0]["steps"][1]["kernel"] = "missing"
    (module_dir / "module.json").write_text(json.dumps(program))
    with pytest.raises(RuntimeError, match="missing") as error:
        load_module(module_dir)
    assert "FP8RT_ERROR" in str(error.value)
    os.remove(module_dir / "module.json")
    with pytest.raises(RuntimeError, match="module.json"):
        fp8mlir.load_module(module_dir)

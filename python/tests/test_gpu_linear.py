"""fp8mlir.nn.Linear on a GPU (marked `gpu`): per recipe (and with the
format e4m3, E4M3 dY, for the per-tensor recipes), Y, dX and dW against
the plain-PyTorch reference of the same recipe and format
(fp8mlir.testing.torch_recipes.TorchFP8Linear: eager quantization,
torch._scaled_mm / F.scaled_mm), the FP8 bytes and scales the forward saves
bit for bit against its quantizer, the error against BF16 nn.Linear, the
delayed-scaling state (and its state_dict round trip), convert_to_fp8,
torch.compile(fullgraph=True), CUDA-graph capture and opcheck of the
layer operators.

The modules come from the kernel cache ($FP8MLIR_KERNEL_CACHE), filled on
the build machine with every module these tests run
(fp8mlir.testing.linear_cases; a test asking for another one fails):

    PYTHONPATH=python /usr/bin/python3 -m fp8mlir.populate CACHE --suite gpu-tests

then, on the GPU machine, python/tests/run_gpu.sh CACHE (or
``python3 -m pytest -m gpu python/tests/test_gpu_linear.py`` with
FP8MLIR_KERNEL_CACHE and FP8RT_LIBRARY set).
"""

import copy

import pytest

from fp8mlir.linear_step import recipe_and_format
from fp8mlir.testing import linear_cases as cases
from torch_ops_util import only_modules_of, torch_or_fail

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu

RECIPES = cases.RECIPES
# With the per-tensor recipes' format e4m3 too ("current-e4m3").
RUNS = cases.RECIPES + cases.E4M3_RECIPES
# Relative Frobenius error against the reference of the same recipe: the
# same FP8 operands, f32 accumulation in another order, one rounding.
GEMM_TOLERANCE = {torch.bfloat16: 1e-2, torch.float32: 1e-3}
# Against BF16 nn.Linear: the quantization error an FP8 user accepts (E4M3
# X and W; dY in E5M2 under the per-tensor recipes' default format).
BF16_BOUND = {"y": 0.08, "dx": 0.15, "dw": 0.15}
DTYPES = {"bf16": torch.bfloat16, "f32": torch.float32}


@pytest.fixture(autouse=True)
def _modules_from_the_table(monkeypatch):
    """Every module a test loads must be in linear_cases (what the GPU
    machine's cache holds)."""
    torch_or_fail()  # before _chip() asks the device
    only_modules_of(monkeypatch, cases.gpu_test_steps(_chip()), "fp8mlir.testing.linear_cases")


def _chip():
    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}a"


def rel(a, b):
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def make_layers(name, run, seed=0):
    """(ours, the reference, BF16 nn.Linear, batch, seq) with the same
    weights; run: a recipe, or "RECIPE-FORMAT" ("current-e4m3")."""
    import fp8mlir.nn
    from fp8mlir.testing.torch_recipes import TorchFP8Linear
    batch, seq, k, n, _, w, bias, main_grad = cases.LAYERS[name]
    recipe, fmt = recipe_and_format(run)
    torch.manual_seed(seed)
    dtype = DTYPES[w]
    ours = fp8mlir.nn.Linear(k, n, bias=bias is not None, recipe=recipe, device="cuda",
                             dtype=dtype, main_grad=main_grad, format=fmt)
    ref = TorchFP8Linear(k, n, bias=bias is not None, recipe=recipe, device="cuda", dtype=dtype,
                         **({} if fmt is None else {"format": fmt}))
    assert ours.format == (None if recipe == "blockwise" else ref.recipe.format)
    bf16 = torch.nn.Linear(k, n, bias=bias is not None, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        ours.weight.normal_(0, k ** -0.5)
        for layer in (ref, bf16):
            layer.weight.copy_(ours.weight)
        if bias is not None:
            ours.bias.normal_()
            ref.bias.copy_(ours.bias)
            bf16.bias.copy_(ours.bias)
    return ours, ref, bf16, batch, seq


def run_step(layer, x, dy, autocast):
    x = x.detach().requires_grad_()
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
        y = layer(x)
    y.backward(dy)
    grad = getattr(layer.weight, "main_grad", None)
    dw = grad.clone() if grad is not None else layer.weight.grad.clone()
    layer.weight.grad = None
    return y.detach(), x.grad, dw


def step_inputs(ours, batch, seq, step, gen):
    scale = 2.0 ** (1 - step)  # (shrinking: a growing X would saturate, as it should)
    x = scale * torch.randn(batch, seq, ours.in_features, device="cuda", dtype=torch.bfloat16,
                            generator=gen)
    dy = torch.randn(batch, seq, ours.out_features, device="cuda", dtype=torch.bfloat16,
                     generator=gen)
    return x, dy


def assert_delayed_state(ours, ref):
    """The delayed-scaling state bit for bit (dY's scale: the format's
    E5M2 or E4M3 maximum)."""
    for i, t in enumerate(("x", "w", "dy")):
        torch.testing.assert_close(getattr(ours, f"{t}_scale"), ref.fp8_scale[i], rtol=0, atol=0)
        torch.testing.assert_close(getattr(ours, f"{t}_amax_history"), ref.amax_history[i],
                                   rtol=0, atol=0)


def check_step(ours, ref, bf16, x, dy, autocast, step, main_grad=None):
    """One training step of ours and the reference on (x, dy): Y, dX and
    dW against the reference and BF16, the delayed state; returns the main
    gradient after the step (main_grad layers; `main_grad` the one before)."""
    got = run_step(ours, x, dy, autocast)
    want = run_step(ref, x, dy, autocast)
    if ours.main_grad:  # this step's dW: what it added to the f32 main gradient
        previous, main_grad = main_grad, got[2]
        got = (*got[:2], main_grad - (0 if previous is None else previous))
        want = (*want[:2], want[2].float())
    plain = run_step(bf16, x, dy, False)
    for what, g, w, p in zip(("y", "dx", "dw"), got, want, plain):
        assert g.shape == w.shape and g.dtype == w.dtype, (what, g.shape, g.dtype, w.dtype)
        # (the reference's bf16 dW rounds once more than the main gradient)
        tol = GEMM_TOLERANCE[torch.bfloat16 if ours.main_grad else g.dtype]
        assert rel(g, w) <= tol, f"step {step} {what}: {rel(g, w):.3e} vs the reference"
        assert rel(g, p) <= BF16_BOUND[what], f"step {step} {what}: {rel(g, p):.3e} vs BF16"
    if ours.recipe == "delayed":
        assert_delayed_state(ours, ref)
    return main_grad


@pytest.mark.parametrize("name", list(cases.LAYERS))
@pytest.mark.parametrize("run", RUNS)
def test_layer_matches_reference(run, name):
    ours, ref, bf16, batch, seq = make_layers(name, run)
    autocast = ours.weight.dtype != torch.bfloat16
    gen = torch.Generator(device="cuda").manual_seed(1)
    main_grad = None
    for step in range(3):  # delayed scaling: later steps use the recorded amaxes
        x, dy = step_inputs(ours, batch, seq, step, gen)
        main_grad = check_step(ours, ref, bf16, x, dy, autocast, step, main_grad)


@pytest.mark.parametrize("name", list(cases.LAYERS))
@pytest.mark.parametrize("run", ["delayed", "delayed-e4m3"])
def test_calibration_step_then_fp8_steps(run, name):
    """fp8mlir.calibrating: a step in high precision (BF16 nn.Linear's Y,
    dX and dW) that leaves the delayed state bit for bit as the reference's
    update for the same amaxes (X in the compute dtype, W, dY); the FP8
    steps after it (small gradients too, which the calibrated scale keeps
    out of E5M2's flush to zero) match the reference's from that state."""
    import fp8mlir
    ours, ref, bf16, batch, seq = make_layers(name, run)
    autocast = ours.weight.dtype != torch.bfloat16
    gen = torch.Generator(device="cuda").manual_seed(3)
    x, dy = step_inputs(ours, batch, seq, 0, gen)
    dy = dy * 1e-5  # a gradient E5M2 flushes to zero at the initial scale 1.0
    with fp8mlir.calibrating(ours):
        got = run_step(ours, x, dy, autocast)
    assert not ours.calibrating
    plain = run_step(bf16, x, dy, False)
    for what, g, p in zip(("y", "dx", "dw"), got, plain):
        assert rel(g, p) <= GEMM_TOLERANCE[torch.bfloat16], f"calibration {what}: {rel(g, p):.3e}"
    ref.record_and_update(x.reshape(-1, ours.in_features), ref.weight,
                          dy.reshape(-1, ours.out_features))
    assert_delayed_state(ours, ref)
    assert ours.dy_scale.item() > 1e4, "dY's scale does not come from its amax"
    main_grad = got[2] if ours.main_grad else None
    for step in range(1, 3):
        x, dy = step_inputs(ours, batch, seq, step, gen)
        main_grad = check_step(ours, ref, bf16, x, dy * 1e-5, autocast, step, main_grad)


def _compare_scales(got, want, what):
    """`got` (the kernels' layout) equals the reference scales `want`
    [rows, blocks]: as they are, transposed, or MN-major with padded rows."""
    got, want = got.float(), want.float()
    if got.shape == want.shape:
        view = got
    elif got.numel() == 1 and want.numel() == 1:
        view = got.reshape(want.shape)
    elif got.shape == want.t().shape:
        view = got.t()
    elif got.dim() == 2 and got.shape[0] == want.shape[1] and got.shape[1] >= want.shape[0]:
        view = got[:, :want.shape[0]].t()
    else:
        raise AssertionError(f"{what}: scales {tuple(got.shape)}, reference {tuple(want.shape)}")
    torch.testing.assert_close(view, want, rtol=0, atol=0, msg=f"{what}: scales differ")


@pytest.mark.parametrize("recipe", RECIPES)
def test_saved_tensors_are_the_recipe_quantizations(recipe):
    """The forward's saved FP8 copies of X and W (1 byte per element) and
    their scales, bit for bit against torch_recipes.quantize."""
    from fp8mlir import _linear_ops
    from fp8mlir.testing import torch_recipes as tr
    ours, _, _, batch, seq = make_layers("tail", recipe)
    x = torch.randn(batch * seq, ours.in_features, device="cuda", dtype=torch.bfloat16)
    state = [None] * 6
    if recipe == "delayed":
        with torch.no_grad():
            ours.x_scale.fill_(4.0)
            ours.w_scale.fill_(64.0)
        state = [ours.x_scale, ours.w_scale, ours.x_amax_history, ours.w_amax_history,
                 ours.dy_scale, ours.dy_amax_history]
    with torch.no_grad():
        outs = _linear_ops.linear_forward(x, ours.weight, ours.bias, *state, None,
                                          ours.step_signature(x.dtype))
    saved = outs[1:5]
    assert all(t.dtype.itemsize == 1 for t in (saved[0], saved[2])), [t.dtype for t in saved]
    opts = {"current": {}, "delayed": {}, "blockwise": {"amax_clamp": 1e-4}}[recipe]
    gran = {"current": ("tensor", "tensor"), "delayed": ("tensor", "tensor"),
            "blockwise": ((1, 128), (128, 128))}[recipe]
    for i, (t, tensor, g) in enumerate((("x", x, gran[0]), ("w", ours.weight, gran[1]))):
        if recipe == "delayed":
            opts = {"scale": getattr(ours, f"{t}_scale")}
        want = tr.quantize(tensor, recipe, "e4m3", g, transposed=True, exact_nan=False, **opts)
        data = saved[2 * i]
        if data.shape != want.data.shape:  # sm_100a keeps the untransposed copy
            want = tr.quantize(tensor, recipe, "e4m3", g, transposed=False, exact_nan=False,
                               **opts)
        assert torch.equal(data.view(torch.uint8), want.codes()), f"{t}: FP8 bytes differ"
        _compare_scales(saved[2 * i + 1], want.scale_inv, t)


def test_delayed_state_stays_f32_when_the_model_is_cast():
    """model.to(torch.bfloat16) casts the weights, not the scaling state."""
    import fp8mlir.nn
    batch, seq, k, n = cases.LAYERS["tail"][:4]
    layer = fp8mlir.nn.Linear(k, n, bias=True, recipe="delayed").cuda().to(torch.bfloat16)
    assert layer.weight.dtype == torch.bfloat16
    for name, buffer in layer.named_buffers():
        assert buffer.dtype == torch.float32 and buffer.is_cuda, name
    x = torch.randn(batch, seq, k, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    layer(x).sum().backward()
    assert x.grad is not None and layer.weight.grad.shape == layer.weight.shape


def test_delayed_state_dict_round_trip():
    import fp8mlir.nn
    ours, _, _, batch, seq = make_layers("tail", "delayed")
    gen = torch.Generator(device="cuda").manual_seed(2)
    inputs = [(torch.randn(batch, seq, ours.in_features, device="cuda", dtype=torch.bfloat16,
                           generator=gen),
               torch.randn(batch, seq, ours.out_features, device="cuda", dtype=torch.bfloat16,
                           generator=gen)) for _ in range(3)]
    for x, dy in inputs[:2]:
        run_step(ours, x, dy, False)
    state = ours.state_dict()
    for name in ("x_scale", "w_scale", "dy_scale", "x_amax_history", "w_amax_history",
                 "dy_amax_history"):
        assert name in state, name
    assert float(ours.x_scale) != 1.0, "two training steps left the scale at its initial value"
    copy_layer = fp8mlir.nn.Linear(ours.in_features, ours.out_features, bias=True,
                                   recipe="delayed", device="cuda", dtype=torch.bfloat16)
    copy_layer.load_state_dict(state)
    for a, b in zip(run_step(ours, *inputs[2], False), run_step(copy_layer, *inputs[2], False)):
        assert torch.equal(a, b)
    for name, value in ours.state_dict().items():
        assert torch.equal(value, copy_layer.state_dict()[name]), name
    # Evaluation (with and without grad) neither records nor updates.
    before = {k: v.clone() for k, v in ours.state_dict().items()}
    ours.eval()
    run_step(ours, *inputs[0], False)
    with torch.no_grad():
        ours(inputs[0][0])
    for name, value in ours.state_dict().items():
        assert torch.equal(value, before[name]), f"evaluation changed {name}"


def small_model(run, seed=0):
    import fp8mlir
    m = cases.MODEL
    torch.manual_seed(seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(m["in"], m["hidden"], bias=False), torch.nn.GELU(),
        torch.nn.Linear(m["hidden"], m["in"], bias=False)).to("cuda", torch.bfloat16)
    bf16 = copy.deepcopy(model)
    recipe, fmt = recipe_and_format(run)
    return fp8mlir.convert_to_fp8(model, recipe=recipe, format=fmt), bf16


def model_inputs(seed):
    m = cases.MODEL
    gen = torch.Generator(device="cuda").manual_seed(seed)
    shape = (m["batch"], m["seq"], m["in"])
    return (torch.randn(shape, device="cuda", dtype=torch.bfloat16, generator=gen),
            torch.randn(shape, device="cuda", dtype=torch.bfloat16, generator=gen))


@pytest.mark.parametrize("run", RUNS)
def test_convert_to_fp8(run):
    import fp8mlir.nn
    model, bf16 = small_model(run)
    recipe, fmt = recipe_and_format(run)
    layers = [module for module in model if isinstance(module, torch.nn.Linear)]
    assert all(type(layer) is fp8mlir.nn.Linear for layer in layers)
    assert all(layer.recipe == recipe for layer in layers)
    assert all(layer.format == (fmt or ("hybrid" if recipe != "blockwise" else None))
               for layer in layers)
    for ours, plain in zip(layers, [m for m in bf16 if isinstance(m, torch.nn.Linear)]):
        assert torch.equal(ours.weight, plain.weight)
    x, _ = model_inputs(3)
    assert rel(model(x), bf16(x)) <= 2 * BF16_BOUND["y"]
    only_first = fp8mlir.convert_to_fp8(small_model(run)[1], recipe=recipe, format=fmt,
                                        filter=lambda name, module: name == "0")
    assert type(only_first[0]) is fp8mlir.nn.Linear and type(only_first[2]) is torch.nn.Linear


def _train_step(model, x, dy):
    y = model(x)
    y.backward(dy)
    return y


@pytest.mark.parametrize("recipe", RECIPES)
def test_torch_compile_fullgraph(recipe):
    """torch.compile(fullgraph=True) of a model of these layers: no graph
    break, the same values as eager (same kernels), the state updated."""
    model, _ = small_model(recipe)
    eager = copy.deepcopy(model)
    x, dy = model_inputs(4)
    _train_step(eager, x, dy)  # warm-up: the modules are loaded before tracing
    _train_step(model, x, dy)
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True)
    for seed in (5, 6):
        x, dy = model_inputs(seed)
        for layer in (eager, model):
            for p in layer.parameters():
                p.grad = None
        want = _train_step(eager, x, dy)
        got = _train_step(compiled, x, dy)
        torch.testing.assert_close(got, want, rtol=0, atol=0)
        for a, b in zip(model.parameters(), eager.parameters()):
            torch.testing.assert_close(a.grad, b.grad, rtol=0, atol=0)
    for (name, a), b in zip(model.state_dict().items(), eager.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0, msg=name)


@pytest.mark.parametrize("recipe", RECIPES)
def test_cuda_graph_capture_and_replay(recipe):
    """Forward + backward of the layers captured in a CUDA graph and
    replayed: the values of eager calls (the state updates replay too)."""
    model, _ = small_model(recipe)
    x, dy = model_inputs(7)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the capture stream
        for _ in range(2):
            _train_step(model, x, dy)
    torch.cuda.current_stream().wait_stream(side)
    eager = copy.deepcopy(model)
    for m in (model, eager):
        for p in m.parameters():
            p.grad = torch.zeros_like(p)
    graph = torch.cuda.CUDAGraph()
    static_x, static_dy = x.clone(), dy.clone()
    with torch.cuda.graph(graph):
        static_y = _train_step(model, static_x, static_dy)
    for seed in (8, 9):
        x, dy = model_inputs(seed)
        static_x.copy_(x)
        static_dy.copy_(dy)
        graph.replay()
        want = _train_step(eager, x, dy)
        torch.cuda.synchronize()
        torch.testing.assert_close(static_y, want, rtol=0, atol=0)
    for a, b in zip(model.parameters(), eager.parameters()):
        torch.testing.assert_close(a.grad, b.grad, rtol=0, atol=0)
    for (name, a), b in zip(model.state_dict().items(), eager.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0, msg=name)


# The modules are compiled for a static token count: the dynamic-shape
# check (test_aot_dispatch_dynamic) does not apply.
# test_aot_dispatch_* sums every floating-point output to check gradients,
# and torch has no sum for FP8 (the forward's saved tensors): the layer
# operators go through AOT autograd in test_torch_compile_fullgraph instead.
OPCHECK_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor")


@pytest.mark.parametrize("recipe", RECIPES)
def test_opcheck(recipe):
    """opcheck of the layer operators (torch_ops_util.opcheck: test_schema
    compares FP8 tensors bit for bit where torch's allclose cannot)."""
    from torch_ops_util import fp8_bitwise_allclose, opcheck

    from fp8mlir import _linear_ops
    ours, _, _, batch, seq = make_layers("tail", recipe)
    x = torch.randn(batch * seq, ours.in_features, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    state = [None] * 6
    if recipe == "delayed":
        state = [ours.x_scale, ours.w_scale, ours.x_amax_history, ours.w_amax_history,
                 ours.dy_scale, ours.dy_amax_history]
    signature = ours.step_signature(x.dtype)
    args = (x, ours.weight, ours.bias, *state, None, signature)
    opcheck(torch, _linear_ops.linear_forward, args, test_utils=OPCHECK_UTILS)
    with torch.no_grad():
        saved = list(_linear_ops.linear_forward(*args)[1:5])
    dy = torch.randn(batch * seq, ours.out_features, device="cuda", dtype=torch.bfloat16)
    backward_args = (dy, saved, state[4], state[5], None, signature)
    with fp8_bitwise_allclose(torch):  # the saved FP8 tensors are in a list argument
        torch.library.opcheck(_linear_ops.linear_backward, backward_args,
                              test_utils="test_schema")
    torch.library.opcheck(_linear_ops.linear_backward, backward_args,
                          test_utils=OPCHECK_UTILS[1:])


def test_format_validation():
    """format: the per-tensor recipes' "hybrid" (default) or "e4m3"; an
    error for another value or another recipe, before any module loads."""
    import fp8mlir
    import fp8mlir.nn
    layer = fp8mlir.nn.Linear(256, 256, recipe="delayed", format="e4m3")
    assert layer.format == "e4m3" and "format='e4m3'" in repr(layer)
    assert "-e4m3-" in layer.step_signature(torch.bfloat16)
    assert fp8mlir.nn.Linear(256, 256).format == "hybrid"
    with pytest.raises(ValueError, match="unknown format 'e5m2'.*'hybrid', 'e4m3'"):
        fp8mlir.nn.Linear(256, 256, recipe="current", format="e5m2")
    with pytest.raises(ValueError, match="only the per-tensor recipes.*not blockwise"):
        fp8mlir.nn.Linear(256, 256, recipe="blockwise", format="e4m3")
    model = torch.nn.Sequential(torch.nn.Linear(256, 256))
    with pytest.raises(ValueError, match="not blockwise"):
        fp8mlir.convert_to_fp8(model, recipe="blockwise", format="hybrid")
    assert type(model[0]) is torch.nn.Linear
    # Without autograd the forward quantizes no dY: both formats run the
    # same inference module.
    e4m3, hybrid = make_layers("tail", "current-e4m3")[0], make_layers("tail", "current")[0]
    x = torch.randn(100, e4m3.in_features, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        torch.testing.assert_close(e4m3(x), hybrid(x), rtol=0, atol=0)


def test_module_call_errors_carry_the_runtime_message():
    from fp8mlir import _linear_ops
    ours, _, _, batch, seq = make_layers("tail", "current")
    x = torch.randn(batch * seq, ours.in_features, device="cuda", dtype=torch.bfloat16)
    step = _linear_ops.step_for(ours.step_signature(x.dtype), x.shape[0], x.device)
    with pytest.raises(RuntimeError, match="x"):
        step.forward(x[:, :-16].contiguous(), ours.weight, ours.bias)
    with pytest.raises(RuntimeError):
        step.forward(x.float(), ours.weight, ours.bias)
    with pytest.raises(TypeError, match="missing"):
        step.forward(x)
    y, *_ = step.forward(x, ours.weight, ours.bias)
    out = torch.empty_like(y)
    outs = step.forward(x, ours.weight, ours.bias, out={"y": out})
    assert outs[0] is out and torch.equal(out, y)


def test_export_keeps_the_layer_operator():
    model, _ = small_model("current")
    model.eval()
    x, _ = model_inputs(10)
    want = model(x).detach()
    program = torch.export.export(model, (x,))
    # The layer operator stays one node (the training forward, or the
    # inference forward where export traces without autograd), also inside
    # the subgraphs of higher-order ops (the layer's autocast region).
    targets = [str(n.target) for _, gm in program.graph_module.named_modules()
               if hasattr(gm, "graph") for n in gm.graph.nodes if n.op == "call_function"]
    layer_ops = [t for t in targets if t.startswith("fp8mlir.linear_")]
    assert len(layer_ops) == 2, targets
    torch.testing.assert_close(program.module()(x).detach(), want, rtol=0, atol=0)


@pytest.mark.parametrize("recipe", RECIPES)
def test_inference_runs_any_token_count(recipe):
    """Without autograd the layer runs the forward compiled for a run-time
    token count: the reference's Y at token counts of any size, also
    under torch.compile(dynamic=True), and the delayed state untouched."""
    from fp8mlir import _linear_ops
    ours, ref, _, _, _ = make_layers("tail", recipe)
    before = {k: v.clone() for k, v in ours.state_dict().items()}
    compiled = torch.compile(ours, fullgraph=True, dynamic=True)
    for tokens in (336, 100, 7):
        x = torch.randn(tokens, ours.in_features, device="cuda", dtype=torch.bfloat16)
        with torch.no_grad():
            got, want = ours(x), ref(x)
            assert rel(got, want) <= GEMM_TOLERANCE[torch.bfloat16], (tokens, rel(got, want))
            torch.testing.assert_close(compiled(x), got, rtol=0, atol=0)
    for name, value in ours.state_dict().items():
        assert torch.equal(value, before[name]), f"inference changed {name}"
    x = torch.randn(40, ours.in_features, device="cuda", dtype=torch.bfloat16)
    scales = (ours.x_scale, ours.w_scale) if recipe == "delayed" else (None, None)
    torch.library.opcheck(_linear_ops.linear_inference,
                          (x, ours.weight.detach(), ours.bias.detach(), *scales,
                           ours.step_signature(x.dtype)))

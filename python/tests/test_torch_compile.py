"""fp8mlir's operators under torch.compile(fullgraph=True), CUDA graphs and
torch.export, and scaled_mm's backward (marked `gpu`).

The compiled, captured and exported runs launch the same kernels as eager
ones, so their FP8 results are compared bit for bit.
"""

import json

import pytest

import fp8mlir
from fp8mlir.testing import torch_ops_cases as cases
from torch_ops_util import (gemm_operands, random_matrix, rng, same_bits, torch_dtype,
                            torch_or_fail)

pytestmark = pytest.mark.gpu
N, K = cases.TEST_N, cases.TEST_K


@pytest.fixture(scope="module")
def torch():
    torch = torch_or_fail()
    import fp8mlir._torch_ops  # noqa: F401 (defines the operators)
    torch._dynamo.reset()
    return torch


def _weight(torch, recipe):
    w = torch.from_numpy(random_matrix(rng("w", recipe), N, K)).cuda().to(torch.bfloat16)
    q = fp8mlir.quantize(w, recipe, block=(128, 128) if recipe == "blockwise" else None)
    return q.data, q.scale_inv if recipe == "tensorwise" else q.scale_inv.t()


def _activation(torch, m, seed=0):
    return torch.from_numpy(random_matrix(rng("x", m, seed), m, K)).cuda().to(torch.bfloat16)


def _layer(recipe):
    """A linear layer's FP8 forward: quantize x, GEMM with the FP8 weight,
    and a dequantize of the FP8 activation on the side (all three
    operators)."""
    def forward(x, w, w_scale):
        q = fp8mlir.quantize(x, recipe)
        y = fp8mlir.scaled_mm(q.data, w.t(), q.scale_inv, w_scale, out_dtype=x.dtype)
        return y, fp8mlir.dequantize(q)
    return forward


def _compiled_matches_eager(torch, recipe, ms, **options):
    w, w_scale = _weight(torch, recipe)
    forward = _layer(recipe)
    compiled = torch.compile(forward, fullgraph=True, **options)
    for m in ms:
        x = _activation(torch, m)
        for got, want in zip(compiled(x, w, w_scale), forward(x, w, w_scale)):
            assert same_bits(torch, got, want)


@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise", "blockwise"])
def test_compile_fullgraph_is_eager_bit_for_bit(torch, recipe):
    _compiled_matches_eager(torch, recipe, (64, 128))


def test_compile_dynamic_shapes(torch):
    _compiled_matches_eager(torch, "rowwise", (16, 48, 208), dynamic=True)


def test_compile_reduce_overhead_cuda_graphs(torch):
    w, w_scale = _weight(torch, "tensorwise")
    forward = _layer("tensorwise")
    compiled = torch.compile(forward, fullgraph=True, mode="reduce-overhead")
    for seed in range(4):  # warm-up runs, then replays of the recorded graph
        x = _activation(torch, 64, seed)
        got = [t.clone() for t in compiled(x, w, w_scale)]
        for g, want in zip(got, forward(x, w, w_scale)):
            assert same_bits(torch, g, want)


def test_compile_delayed_scaling_updates_the_history(torch):
    """quantize with an amax history (an operator that mutates it) under
    torch.compile(fullgraph=True): the outputs and the updated history are
    eager's."""
    def forward(x, scale, history):
        q = fp8mlir.quantize(x, "delayed", scale=scale, amax_history=history,
                             columnwise=True)
        return q.data, q.scale_inv, q.columnwise_data, q.columnwise_scale_inv

    compiled = torch.compile(forward, fullgraph=True)
    scale = torch.tensor(0.75, device="cuda")
    eager_history = torch.rand(16, device="cuda") * 4
    compiled_history = eager_history.clone()
    for seed in range(2):
        x = _activation(torch, 64, seed) * (8 if seed else 1)  # the second raises the amax
        want = forward(x, scale, eager_history)
        got = compiled(x, scale, compiled_history)
        for g, w in zip(got, want):
            assert same_bits(torch, g, w)
        assert same_bits(torch, compiled_history, eager_history)


def test_cuda_graph_capture_and_replay(torch):
    """torch.cuda.graph captures quantize (amax, zeroed in the graph, then
    the cast) and scaled_mm; each replay equals an eager run on new data."""
    w, w_scale = _weight(torch, "tensorwise")
    forward = _layer("tensorwise")
    static_x = _activation(torch, 64)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up: kernels resolved, modules loaded
        forward(static_x, w, w_scale)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y, static_x_dq = forward(static_x, w, w_scale)
    for seed in range(1, 4):
        static_x.copy_(_activation(torch, 64, seed))
        graph.replay()
        want_y, want_dq = forward(static_x, w, w_scale)
        assert same_bits(torch, static_y, want_y)
        assert same_bits(torch, static_x_dq, want_dq)


def _has_stream_k_variant(torch, spec):
    """Whether the GEMM of `spec` has a stream-K launch variant (one with a
    workspace param, runtime/README.md "Launch variants")."""
    from fp8mlir import _torch_ops
    (kernel,) = _torch_ops.kernels_for(spec, torch.device("cuda", torch.cuda.current_device()))
    variants = [json.loads((kernel.path.parent / name).read_text())
                for name in kernel.meta.get("variants", ())]
    return any(p["kind"] == "workspace" for v in variants for p in v["params"])


def test_stream_k_gemm_captured_after_eager_use_on_another_stream(torch):
    """At M = 16 the tensorwise GEMM takes its stream-K (swap-AB) launch
    variant. Launched eagerly on the default stream and on a side stream
    (each stream's own workspace, no host wait), then captured by
    torch.cuda.graph on its capture stream (a workspace of the graph,
    runtime/README.md "Workspace") and replayed: each replay equals an eager
    run on new data, bit for bit."""
    assert _has_stream_k_variant(torch, cases.TEST_GEMMS["tensorwise"])
    w, w_scale = _weight(torch, "tensorwise")

    def gemm(x):
        q = fp8mlir.quantize(x, "tensorwise")
        return fp8mlir.scaled_mm(q.data, w.t(), q.scale_inv, w_scale, out_dtype=x.dtype)

    m = 16
    static_x = _activation(torch, m)
    want = gemm(static_x)  # the default stream
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        on_side = gemm(static_x)
    torch.cuda.current_stream().wait_stream(side)
    assert same_bits(torch, on_side, want)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = gemm(static_x)
    for seed in range(1, 4):
        static_x.copy_(_activation(torch, m, seed))
        graph.replay()
        assert same_bits(torch, static_y, gemm(static_x))


def test_export_keeps_the_operators(torch):
    w, w_scale = _weight(torch, "blockwise")

    class Layer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("w", w)
            self.register_buffer("w_scale", w_scale)

        def forward(self, x):
            return _layer("blockwise")(x, self.w, self.w_scale)

    x = _activation(torch, 64)
    program = torch.export.export(Layer(), (x,))
    targets = {str(node.target) for node in program.graph.nodes
               if node.op == "call_function"}
    for op in ("fp8mlir.quantize.default", "fp8mlir.scaled_mm.default",
               "fp8mlir.dequantize.default"):
        assert op in targets, targets
    for got, want in zip(program.module()(x), Layer()(x)):
        assert same_bits(torch, got, want)


def _gemm_reference(torch, a, b, sa, sb, recipe):
    """(a * sa) @ (b * sb) in f64 with torch ops, differentiable in sa, sb."""
    m, k = a.shape
    n = b.shape[1]
    if recipe == "blockwise":
        sa_full = sa.double().repeat_interleave(128, 1)[:, :k]
        sb_full = sb.double().repeat_interleave(128, 0)[:k].repeat_interleave(128, 1)[:, :n]
    else:
        sa_full, sb_full = sa.double(), sb.double()
    return (a.float().double() * sa_full) @ (b.float().double() * sb_full)


@pytest.mark.parametrize("recipe, with_bias", [("tensorwise", True), ("rowwise", False),
                                              ("blockwise", False)])
def test_backward_of_scales_and_bias(torch, recipe, with_bias):
    a, b = gemm_operands(torch, recipe, 64, N, K)
    grad = torch.randn(64, N, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(N, device="cuda", dtype=torch.bfloat16) if with_bias else None
    leaves = [[a.torch_scale().clone().requires_grad_(),
               b.torch_scale().clone().requires_grad_(),
               None if bias is None else bias.clone().requires_grad_()] for _ in range(2)]
    sa, sb, ours_bias = leaves[0]
    y = fp8mlir.scaled_mm(a.data, b.data.t(), sa, sb, bias=ours_bias)
    y.backward(grad)
    rsa, rsb, ref_bias = leaves[1]
    ref = _gemm_reference(torch, a.data, b.data.t(), rsa, rsb, recipe)
    if ref_bias is not None:
        ref = ref + ref_bias.double()
    ref.backward(grad.double())
    pairs = [(sa.grad, rsa.grad), (sb.grad, rsb.grad)]
    if with_bias:
        pairs.append((ours_bias.grad, ref_bias.grad))
    for got, want in pairs:
        assert got.shape == want.shape and got.dtype == want.dtype
        assert torch.allclose(got.double(), want.double(), rtol=1e-2,
                              atol=1e-3 * want.double().abs().max().item())


def test_compiled_backward(torch):
    gemm = cases.TEST_GEMMS["blockwise-f32"]
    a, b = gemm_operands(torch, gemm.recipe, 64, gemm.n, gemm.k)
    out_dtype = torch_dtype(torch, gemm.out_dtype)

    def loss(sa, sb):
        y = fp8mlir.scaled_mm(a.data, b.data.t(), sa, sb, out_dtype=out_dtype)
        return (y * y).sum()

    compiled = torch.compile(loss, fullgraph=True)
    grads = []
    for f in (loss, compiled):
        sa = a.torch_scale().clone().requires_grad_()
        sb = b.torch_scale().clone().requires_grad_()
        f(sa, sb).backward()
        grads.append((sa.grad, sb.grad))
    for got, want in zip(grads[1], grads[0]):
        assert torch.allclose(got, want, rtol=1e-4, atol=1e-4 * want.abs().max())

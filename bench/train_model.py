"""The model, data and training loop of train_fp8.py (imports torch).

A decoder-only transformer on bytes: token + learned position embeddings,
pre-norm blocks (RMSNorm, causal multi-head attention through
F.scaled_dot_product_attention, RMSNorm, SwiGLU MLP), a final RMSNorm and an
untied 256-way head. The blocks' four linear layers (qkv, proj, gate_up,
down; no bias) are the ones an FP8 run replaces; embeddings, norms, the head
and attention stay in BF16/f32. f32 master weights, bf16 autocast, AdamW.
"""

import contextlib
import gc
import hashlib
import math
import os
import sysconfig
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import linear_factories

VOCAB = 256
SEPARATOR = b"\0"  # between files
BLOCK_LINEARS = ("attn.qkv", "attn.proj", "mlp.gate_up", "mlp.down")


# --- data --------------------------------------------------------------------------

def stdlib_corpus():
    """The standard library's .py sources (not site-/dist-packages), in sorted
    path order, joined by NUL bytes: (uint8 array, description)."""
    root = Path(sysconfig.get_paths()["stdlib"]).resolve()
    files = []
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs
                            if d not in ("site-packages", "dist-packages", "__pycache__"))
        files += [Path(directory) / n for n in sorted(names) if n.endswith(".py")]
    files.sort(key=lambda p: p.relative_to(root).as_posix())
    data = SEPARATOR.join(p.read_bytes() for p in files)
    info = {"root": str(root), "files": len(files), "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest()}
    return np.frombuffer(data, dtype=np.uint8), info


class Batches:
    """Fixed train/val split (the last val_fraction of the bytes is val) and
    a fixed sequence of training batches (offsets from the seed): every run
    sees the same data in the same order."""

    def __init__(self, data, seq, batch, steps, seed, val_fraction, eval_batches, device):
        n_val = int(len(data) * val_fraction)
        n_train = len(data) - n_val
        if n_val < seq + 1 or n_train < seq + 1:
            raise ValueError(f"corpus of {len(data)} bytes is too small for sequences of {seq}")
        self.seq, self.batch = seq, batch
        self.train = torch.from_numpy(data[:n_train].copy()).to(device)
        self.val = torch.from_numpy(data[n_train:].copy()).to(device)
        rng = np.random.default_rng(seed)
        self.offsets = torch.from_numpy(
            rng.integers(0, n_train - seq - 1, size=(steps, batch))).to(device)
        val_offsets = np.linspace(0, n_val - seq - 1, eval_batches * batch).astype(np.int64)
        self.val_offsets = torch.from_numpy(val_offsets.reshape(eval_batches, batch)).to(device)
        self.positions = torch.arange(seq + 1, device=device)
        self.split = {"train_bytes": n_train, "val_bytes": n_val}

    def _gather(self, source, offsets):
        tokens = source[offsets[:, None] + self.positions].long()
        return tokens[:, :-1], tokens[:, 1:]

    def train_batch(self, step):
        return self._gather(self.train, self.offsets[step])

    def val_batches(self):
        for offsets in self.val_offsets:
            yield self._gather(self.val, offsets)


# --- model -------------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return F.rms_norm(x.float(), (x.shape[-1],), self.weight, self.eps)


class Attention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(x).reshape(b, s, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(o.transpose(1, 2).reshape(b, s, h))


class SwiGLU(nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.gate_up = nn.Linear(hidden, 2 * ffn, bias=False)
        self.down = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.norm1, self.attn = RMSNorm(hidden), Attention(hidden, heads)
        self.norm2, self.mlp = RMSNorm(hidden), SwiGLU(hidden, ffn)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Decoder(nn.Module):
    def __init__(self, layers, hidden, heads, ffn, seq):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, hidden)
        self.pos = nn.Embedding(seq, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads, ffn) for _ in range(layers))
        self.norm = RMSNorm(hidden)
        self.head = nn.Linear(hidden, VOCAB, bias=False)
        for name, p in self.named_parameters():
            if p.dim() == 2:  # GPT-2 style: N(0, 0.02), residual projections scaled down
                std = 0.02 / math.sqrt(2 * layers) if name.endswith(("proj.weight", "down.weight")) else 0.02
                nn.init.normal_(p, std=std)

    def forward(self, tokens):
        x = self.tok(tokens) + self.pos(torch.arange(tokens.shape[1], device=tokens.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def ffn_size(hidden):
    """SwiGLU width: 8/3 of hidden, rounded up to a multiple of 256."""
    return -(-(8 * hidden // 3) // 256) * 256


def block_linears(model):
    """(dotted name, module) of every linear layer in the blocks."""
    for i, block in enumerate(model.blocks):
        for name in BLOCK_LINEARS:
            parent, attr = name.split(".")
            yield f"blocks.{i}.{name}", getattr(getattr(block, parent), attr)


def convert(model, factory, recipe):
    """Replaces the blocks' nn.Linear layers by factory's, same weights."""
    device = next(model.parameters()).device
    for i, block in enumerate(model.blocks):
        for name in BLOCK_LINEARS:
            parent, attr = name.split(".")
            old = getattr(getattr(block, parent), attr)
            new = linear_factories.build(factory, recipe, old, device, old.weight.dtype)
            setattr(getattr(block, parent), attr, new)


# --- timing of the linear layers ---------------------------------------------------

class _Mark(torch.autograd.Function):
    """Identity whose backward records a CUDA event."""

    @staticmethod
    def forward(ctx, x, timer, key):
        ctx.timer, ctx.key = timer, key
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        ctx.timer.record(*ctx.key)
        return grad, None, None


class LinearTimer:
    """CUDA events around each block linear's forward (hooks) and backward
    (identity marks on its input and output: the output's gradient arriving
    starts the layer's backward, its input's gradient leaving ends it),
    recorded only while `active`."""

    def __init__(self, named_modules):
        self.active = False
        self.events = []
        self.handles = []
        for name, module in named_modules:
            self.handles.append(module.register_forward_pre_hook(self._pre(name)))
            self.handles.append(module.register_forward_hook(self._post(name)))

    def record(self, kind, name):
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        self.events.append((kind, name, event))

    def _pre(self, name):
        def hook(module, args):
            if not self.active:
                return None
            self.record("forward_start", name)
            x = args[0]
            if x.requires_grad:
                return (_Mark.apply(x, self, ("backward_end", name)),) + tuple(args[1:])
            return None
        return hook

    def _post(self, name):
        def hook(module, args, out):
            if not self.active:
                return None
            self.record("forward_end", name)
            return _Mark.apply(out, self, ("backward_start", name)) if out.requires_grad else None
        return hook

    def total_ms(self):
        """Sum over layers of forward + backward milliseconds recorded."""
        torch.cuda.synchronize()
        by_key = {}
        for kind, name, event in self.events:
            by_key.setdefault((kind, name), []).append(event)
        total = 0.0
        for (kind, name), starts in by_key.items():
            if kind.endswith("_start"):
                ends = by_key.get((kind.replace("_start", "_end"), name), [])
                total += sum(s.elapsed_time(e) for s, e in zip(starts, ends))
        return total

    def remove(self):
        for handle in self.handles:
            handle.remove()


# --- training ----------------------------------------------------------------------

def lr_lambda(warmup, steps, min_ratio):
    def f(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, steps - warmup)
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
    return f


def make_optimizer(model, cfg):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=cfg["lr"], betas=(0.9, 0.95), eps=1e-8, fused=True)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lr_lambda(cfg["warmup"], cfg["steps"], cfg["min_lr_ratio"]))
    return opt, sched


def loss_of(model, x, y):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(x)
    return F.cross_entropy(logits.float().view(-1, VOCAB), y.reshape(-1))


@torch.no_grad()
def evaluate(model, batches):
    model.eval()
    losses = [loss_of(model, x, y) for x, y in batches.val_batches()]
    model.train()
    return torch.stack(losses).mean().item()


def timed_window(cfg):
    """The steps whose linear layers are timed: timing_steps from the middle."""
    count = max(0, min(cfg["timing_steps"], cfg["steps"] - 1))
    start = max(1, min(cfg["steps"] // 2, cfg["steps"] - count))
    return range(start, start + count)


def calibration(model, step, calibration_steps):
    """The context of a step: fp8mlir.calibrating(model) for the first
    calibration_steps steps (the delayed layers compute in high precision
    and record their amaxes), nothing after."""
    if step >= calibration_steps:
        return contextlib.nullcontext()
    import fp8mlir
    return fp8mlir.calibrating(model)


def train_run(name, recipe, factory, batches, cfg, log, seed=None, calibration_steps=0):
    """One run; returns its record (losses, times, memory, linear share).
    seed: the initial weights' (default cfg["seed"]; batches carries the
    data order); the first calibration_steps steps run in calibration
    mode (fp8mlir.calibrating)."""
    device = torch.device("cuda")
    seed = cfg["seed"] if seed is None else seed
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    model = Decoder(cfg["layers"], cfg["hidden"], cfg["heads"], cfg["ffn"], cfg["seq"]).to(device)
    if recipe != "bf16":
        convert(model, factory, recipe)
    opt, sched = make_optimizer(model, cfg)
    timer = LinearTimer(block_linears(model))
    window = timed_window(cfg)
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    losses, step_events, window_events = [], [], []
    wall = time.perf_counter()
    for step in range(cfg["steps"]):
        x, y = batches.train_batch(step)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        timer.active = step in window
        start.record()
        with calibration(model, step, calibration_steps):
            loss = loss_of(model, x, y)
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["clip"])
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        end.record()
        timer.active = False
        step_events.append((start, end))
        if step in window:
            window_events.append((start, end))
        losses.append(loss.detach())
        if (step + 1) % cfg["log_every"] == 0 or step + 1 == cfg["steps"]:
            log(f"[{name} seed {seed}] step {step + 1}/{cfg['steps']} loss {loss.item():.4f} "
                f"lr {sched.get_last_lr()[0]:.2e} {time.perf_counter() - wall:.1f}s")
    torch.cuda.synchronize()
    wall = time.perf_counter() - wall
    val_loss = evaluate(model, batches)
    linear_ms = timer.total_ms()
    timer.remove()
    record = {
        "name": name, "recipe": recipe, "status": "ok", "message": "",
        "linear": "torch.nn.Linear (bf16 autocast)" if recipe == "bf16" else factory.description,
        "params": sum(p.numel() for p in model.parameters()),
        "loss": torch.stack(losses).float().cpu().tolist(),
        "val_loss": val_loss,
        "step_ms": [s.elapsed_time(e) for s, e in step_events],
        "peak_memory_bytes": torch.cuda.max_memory_allocated(),
        "wall_s": wall,
        "timed_steps": list(window),
        "calibration_steps": calibration_steps,
        "linear_ms_per_step": linear_ms / len(window) if len(window) else None,
        "timed_step_ms": (sum(s.elapsed_time(e) for s, e in window_events) / len(window_events)
                          if window_events else None),
    }
    del model, opt, sched, timer, losses
    gc.collect()
    torch.cuda.empty_cache()
    return record

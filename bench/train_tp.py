#!/usr/bin/env python3
"""A tensor-parallel FP8 training step on several GPUs: BF16 against FP8
communication.

    torchrun --nproc-per-node 2 bench/train_tp.py [--recipes current,blockwise] [--steps 30]

The model of bench/train_fp8.py (bench/train_model.py: byte-level decoder,
same initial weights and batches) split Megatron-style with sequence
parallelism over the ranks: in each block qkv and gate_up are
column-parallel (heads and FFN columns split), proj and down row-parallel;
norms and residuals run on the rank's sequence shard; embeddings and the
head are replicated (their inputs' gradients reduced over the group). The
four linear layers compute FP8 GEMMs per recipe (fp8mlir.distributed.tp)
with either

- bf16 communication: all-gather the BF16 shard, then quantize the whole
  tensor; or
- fp8 communication: sharded quantization (amax all-reduce) and FP8
  all-gather of the rowwise data (the columnwise shard gathered at the
  start of the backward).

Quantization and the GEMMs run on the project's kernels
(fp8mlir.distributed.kernels: fp8mlir.quantize, fp8mlir.scaled_mm; the
blockwise weight gradient, 1x128 x 1x128, has no project GEMM and runs on
cuBLASLt), which needs FP8RT_LIBRARY and a kernel cache with
``fp8mlir.populate --suite dist`` (the default sizes); ``--reference``
runs the torch references (eager quantization, cuBLASLt) instead.

Both give the same FP8 tensors, so the two runs' losses must be equal bit
for bit at every step, unless kernels outside the FP8 layers (attention or
embedding backward) make training itself not repeat: the BF16 run runs
twice to show that noise, and the FP8 run then passes when its largest
relative loss gap to BF16 is within 3x the repeat's gap + 1e-3 (exit
status 1 otherwise). Times: median step
(CUDA events) after --warmup steps, tokens/s, peak memory, bytes the
collectives sent. Writes train-tp-<n>x-<gpu>-<date>.{json,md}.
"""

import argparse
import statistics
import sys

import dist_common

torch, dist = dist_common.init()

import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import train_model as tm  # noqa: E402
from fp8mlir.distributed import sharded as sh  # noqa: E402
from fp8mlir.distributed import tp  # noqa: E402
from fp8mlir.distributed.comm import TorchCommunicator  # noqa: E402


class _GatherRows(torch.autograd.Function):
    """BF16 all-gather of sequence shards; the backward keeps this rank's
    rows of the (replicated, identical) gradient."""

    @staticmethod
    def forward(ctx, x_r, ctxt):
        ctx.ctxt = ctxt
        return sh.gather_rows(ctxt.comm, ctxt.backend, x_r.contiguous(), ctxt.seq_counts)

    @staticmethod
    def backward(ctx, grad):
        w = ctx.ctxt.seq_window(grad.shape)
        return grad[w.row:w.row + w.rows].contiguous(), None


def _param(t):
    return nn.Parameter(t.detach().clone().contiguous())


class TPBlock(nn.Module):
    def __init__(self, block, ctxt, recipe, heads):
        super().__init__()
        size, rank = ctxt.comm.size, ctxt.rank
        self.ctxt, self.recipe = ctxt, recipe
        hidden = block.attn.qkv.weight.shape[1]
        hd = hidden // heads
        self.local_heads = heads // size
        h0 = rank * self.local_heads
        qkv = block.attn.qkv.weight.reshape(3, heads, hd, hidden)[:, h0:h0 + self.local_heads]
        self.qkv = _param(qkv.reshape(-1, hidden))
        self.proj = _param(block.attn.proj.weight[:, h0 * hd:(h0 + self.local_heads) * hd])
        ffn = block.mlp.down.weight.shape[1]
        f_r = ffn // size
        gate, up = block.mlp.gate_up.weight.chunk(2, dim=0)
        self.gate_up = _param(torch.cat([gate[rank * f_r:(rank + 1) * f_r], up[rank * f_r:(rank + 1) * f_r]]))
        self.down = _param(block.mlp.down.weight[:, rank * f_r:(rank + 1) * f_r])
        self.norm1, self.norm2 = block.norm1, block.norm2
        self.counts = {"qkv": [self.qkv.shape[0]] * size, "proj": [self.proj.shape[1]] * size,
                       "gate_up": [self.gate_up.shape[0]] * size, "down": [self.down.shape[1]] * size}
        self.hd = hd

    def col(self, x, name):
        with torch.autocast("cuda", enabled=False):
            return tp.column_parallel_linear(x.to(torch.bfloat16), getattr(self, name), self.ctxt,
                                             self.recipe, self.counts[name])

    def row(self, x, name):
        with torch.autocast("cuda", enabled=False):
            return tp.row_parallel_linear(x.to(torch.bfloat16), getattr(self, name), self.ctxt,
                                          self.recipe, self.counts[name])

    def sharded(self):
        return [self.qkv, self.proj, self.gate_up, self.down]

    def forward(self, x_r, batch, seq):
        qkv = self.col(self.norm1(x_r), "qkv")
        q, k, v = qkv.reshape(batch, seq, 3, self.local_heads, self.hd).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x_r = x_r + self.row(o.transpose(1, 2).reshape(batch * seq, -1), "proj")
        gate, up = self.col(self.norm2(x_r), "gate_up").chunk(2, dim=-1)
        return x_r + self.row(F.silu(gate) * up, "down")


class TPDecoder(nn.Module):
    def __init__(self, full, ctxt, recipe, heads):
        super().__init__()
        self.ctxt = ctxt
        self.tok, self.pos, self.norm, self.head = full.tok, full.pos, full.norm, full.head
        self.blocks = nn.ModuleList(TPBlock(b, ctxt, recipe, heads) for b in full.blocks)

    def replicated_partial(self):
        """Replicated parameters whose gradients each rank computes from
        its sequence shard only (summed over the group after backward)."""
        out = list(self.tok.parameters()) + list(self.pos.parameters()) + list(self.norm.parameters())
        for b in self.blocks:
            out += list(b.norm1.parameters()) + list(b.norm2.parameters())
        return out

    def clip_grad_norm(self, clip):
        """The global gradient norm (sharded parameters summed over the
        group, replicated ones once) clipped to ``clip``."""
        sharded = [p for b in self.blocks for p in b.sharded()]
        ids = {id(p) for p in sharded}
        sq = torch.stack([p.grad.float().pow(2).sum() for p in sharded]).sum()
        dist.all_reduce(sq)
        sq = sq + torch.stack([p.grad.float().pow(2).sum() for p in self.parameters()
                               if id(p) not in ids]).sum()
        coef = (clip / (sq.sqrt() + 1e-6)).clamp(max=1.0)
        for p in self.parameters():
            p.grad.mul_(coef)

    def forward(self, tokens):
        b, s = tokens.shape
        x = self.tok(tokens) + self.pos(torch.arange(s, device=tokens.device))
        x = x.reshape(b * s, -1)
        w = self.ctxt.seq_window(x.shape)
        x_r = x[w.row:w.row + w.rows]
        for block in self.blocks:
            x_r = block(x_r, b, s)
        full = _GatherRows.apply(self.norm(x_r).to(torch.bfloat16), self.ctxt)
        return self.head(full).reshape(b, s, -1)


def train(args, cfg, batches, recipe, mode, comm, log):
    torch.manual_seed(cfg["seed"])
    torch.cuda.manual_seed(cfg["seed"])
    full = tm.Decoder(cfg["layers"], cfg["hidden"], cfg["heads"], cfg["ffn"], cfg["seq"]).cuda()
    tokens = cfg["batch"] * cfg["seq"]
    ctxt = tp.TPContext(comm, sh.split(tokens, comm.size), mode, kernels=not args.reference)
    model = TPDecoder(full, ctxt, recipe, cfg["heads"])
    del full
    opt, sched = tm.make_optimizer(model, cfg)
    partial = model.replicated_partial()
    torch.cuda.reset_peak_memory_stats()
    losses, times = [], []
    comm.traffic.clear()
    for step in range(cfg["steps"]):
        x, y = batches.train_batch(step)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        loss = F.cross_entropy(logits.float().view(-1, tm.VOCAB), y.reshape(-1))
        loss.backward()
        for p in partial:
            dist.all_reduce(p.grad)
        model.clip_grad_norm(cfg["clip"])
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        end.record()
        losses.append(loss.detach())
        times.append((start, end))
        if step == cfg["warmup_steps"] - 1:
            comm.traffic.clear()
        if (step + 1) % 10 == 0 or step + 1 == cfg["steps"]:
            log(f"[{recipe}/{mode}] step {step + 1} loss {loss.item():.4f}")
    torch.cuda.synchronize()
    step_ms = [s.elapsed_time(e) for s, e in times]
    timed = step_ms[cfg["warmup_steps"]:]
    sent = {}
    for kind, nbytes in comm.traffic:
        sent[kind] = sent.get(kind, 0) + nbytes
    steps_counted = max(1, cfg["steps"] - cfg["warmup_steps"])
    return {"recipe": recipe, "comm": mode, "loss": torch.stack(losses).float().cpu().tolist(),
            "step_ms": step_ms, "median_step_ms": statistics.median(timed),
            "tokens_per_s": tokens / (statistics.median(timed) / 1e3),
            "peak_memory_bytes": torch.cuda.max_memory_allocated(),
            "bytes_sent_per_step": {k: v / steps_counted for k, v in sent.items()}}


def markdown(report):
    cfg = report["config"]
    lines = ["# Tensor-parallel FP8 training step: BF16 against FP8 communication", ""]
    lines += dist_common.environment_markdown(report["environment"])
    lines += [f"Model: {cfg['layers']} layers, hidden {cfg['hidden']}, heads {cfg['heads']}, "
              f"FFN {cfg['ffn']}, {cfg['batch']}x{cfg['seq']} tokens per step, TP "
              f"{report['environment']['gpus']} with sequence parallelism; {cfg['steps']} steps, "
              f"times after {cfg['warmup_steps']}. Quantization and GEMMs: "
              f"{report['kernels']}.", "",
              "| recipe | comm | median step ms | tokens/s | peak GiB | all-gather MiB/step "
              "| reduce-scatter MiB/step | amax all-reduce KiB/step | final loss |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in report["runs"]:
        b = r["bytes_sent_per_step"]
        lines.append(f"| {r['recipe']} | {r['comm']} | {r['median_step_ms']:.2f} | {r['tokens_per_s']:.0f} "
                     f"| {r['peak_memory_bytes'] / 2**30:.2f} | {b.get('all_gather', 0) / 2**20:.1f} "
                     f"| {b.get('reduce_scatter', 0) / 2**20:.1f} | {b.get('all_reduce_max', 0) / 2**10:.1f} "
                     f"| {r['loss'][-1]:.4f} |")
    lines += ["", "Losses equal bit for bit at every step (FP8 vs BF16 communication; the first "
              "step's forward is deterministic, later steps also depend on attention and "
              "embedding backward kernels): "
              + ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in report["losses_equal"].items())]
    lines += ["", "Largest relative loss gap over the steps, FP8 vs BF16 communication and "
              "BF16 vs its repeat (the run-to-run noise): "
              + ", ".join(f"{k}: {g['fp8_vs_bf16']:.2e} / {g['bf16_vs_repeat']:.2e}"
                          for k, g in report.get("largest_relative_loss_gap", {}).items())]
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(dist_common.HERE / "results"))
    p.add_argument("--recipes", default="current,blockwise")
    p.add_argument("--reference", action="store_true",
                   help="torch references (eager quantization, cuBLASLt) instead of the project's kernels")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup-steps", type=int, default=5)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seed", type=int, default=1234)
    args = p.parse_args()
    comm = TorchCommunicator()
    if args.heads % comm.size or args.hidden % args.heads or not 0 <= args.warmup_steps < args.steps:
        sys.exit("heads must divide by the GPU count, hidden by heads; 0 <= warmup-steps < steps")
    cfg = {"layers": args.layers, "hidden": args.hidden, "heads": args.heads,
           "ffn": tm.ffn_size(args.hidden), "seq": args.seq, "batch": args.batch, "seed": args.seed,
           "steps": args.steps, "warmup_steps": args.warmup_steps, "lr": 3e-4, "min_lr_ratio": 0.1,
           "warmup": max(1, args.steps // 10), "weight_decay": 0.1, "clip": 1.0}
    data, _ = tm.stdlib_corpus()
    batches = tm.Batches(data, args.seq, args.batch, args.steps, args.seed, 0.02, 1, "cuda")

    def log(msg):
        if comm.rank == 0:
            print(msg, flush=True)
    runs = []
    for recipe in args.recipes.split(","):
        for mode in ("bf16", "fp8", "bf16"):  # BF16 twice: the run-to-run noise
            runs.append(train(args, cfg, batches, recipe, mode, comm, log))
            if any(r["recipe"] == recipe and r["comm"] == mode for r in runs[:-1]):
                runs[-1]["comm"] = "bf16 (repeat)"
            torch.cuda.empty_cache()
    equal, gaps, ok = {}, {}, True
    for recipe in args.recipes.split(","):
        by_mode = {r["comm"]: r["loss"] for r in runs if r["recipe"] == recipe}
        a, b, again = by_mode["bf16"], by_mode["fp8"], by_mode["bf16 (repeat)"]
        equal[recipe] = a == b
        gaps[recipe] = {"fp8_vs_bf16": max_gap(a, b), "bf16_vs_repeat": max_gap(a, again)}
        # bit-exact, unless a kernel outside the FP8 layers (attention or
        # embedding backward) makes the BF16 run itself not repeat: then the
        # FP8 run may differ as much as the repeat does (the trajectories are
        # chaotic, so by up to 3x its gap, and 1e-3 relative)
        noise = gaps[recipe]["bf16_vs_repeat"]
        ok &= equal[recipe] or (noise > 0 and gaps[recipe]["fp8_vs_bf16"] <= 3 * noise + 1e-3)
    env = dist_common.environment(torch, dist)
    if comm.rank == 0:
        report = {"environment": env, "config": cfg, "runs": runs, "losses_equal": equal,
                  "largest_relative_loss_gap": gaps,
                  "kernels": "torch references" if args.reference else "the project's kernels"}
        if not args.reference:
            from fp8mlir.distributed import kernels
            report["kernel_usage"] = kernels.usage_lines()
            report["kernels"] += " (" + "; ".join(report["kernel_usage"]) + ")"
        dist_common.write_report(report, dist_common.report_path(args.out, "train-tp", env), markdown)
        print("\n".join(markdown(report)[-len(runs) - 6:]))
    dist.destroy_process_group()
    return 0 if ok else 1


def max_gap(a, b):
    """The largest relative difference of two loss curves, step by step."""
    return max(abs(u - v) / max(abs(u), 1e-30) for u, v in zip(a, b))


if __name__ == "__main__":
    sys.exit(main())

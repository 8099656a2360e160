"""Shared pieces of the 2-GPU scripts (dist_exactness.py, dist_speed.py,
train_tp.py): process-group setup, the environment with the interconnect,
report writing on rank 0."""

import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "python")]


def init():
    """torch.distributed with NCCL, one GPU per process (torchrun)."""
    import torch
    import torch.distributed as dist
    if "RANK" not in os.environ:
        sys.exit("run me under torchrun: torchrun --nproc-per-node 2 " + " ".join(sys.argv))
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    # A collective that never completes (a rank gone ahead or failed) ends
    # the run after FP8MLIR_DIST_TIMEOUT seconds instead of hanging it.
    timeout = datetime.timedelta(seconds=int(os.environ.get("FP8MLIR_DIST_TIMEOUT", "300")))
    dist.init_process_group("nccl", device_id=torch.device("cuda", local), timeout=timeout)
    return torch, dist


def _run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"({' '.join(cmd)} failed: {e})"


def _nccl_version(torch):
    v = torch.cuda.nccl.version()
    return ".".join(map(str, v)) if isinstance(v, tuple) else str(v)


def environment(torch, dist):
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {
        "gpu": torch.cuda.get_device_name(),
        "gpus": dist.get_world_size(),
        "sm_count": props.multi_processor_count,
        "driver": _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]).split("\n")[0],
        "cuda_runtime": torch.version.cuda,
        "torch": torch.__version__,
        "nccl": _nccl_version(torch),
        "nccl_env": {k: v for k, v in os.environ.items() if k.startswith("NCCL_")},
        "topology": re.sub(r"\x1b\[[0-9;]*m", "", _run(["nvidia-smi", "topo", "-m"])),
        "python": platform.python_version(),
        "host": platform.node(),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": shlex.join(["torchrun", f"--nproc-per-node={dist.get_world_size()}"] + sys.argv),
    }


def environment_markdown(env):
    return [f"- {env['gpus']}x {env['gpu']}, driver {env['driver']}, CUDA {env['cuda_runtime']}, "
            f"torch {env['torch']}, NCCL {env['nccl']}",
            f"- NCCL environment: {env['nccl_env'] or 'none set'}",
            f"- date {env['date']}, host {env['host']}", f"- command: `{env['command']}`",
            "", "Interconnect (`nvidia-smi topo -m`):", "", "```", env["topology"], "```", ""]


def report_path(out_dir, kind, env):
    gpu = "".join(c if c.isalnum() else "-" for c in env["gpu"].lower())
    gpu = "-".join(p for p in gpu.split("-") if p)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(out_dir) / f"{kind}-{env['gpus']}x-{gpu}-{stamp}.json"


def write_report(report, path, markdown):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1) + "\n")
    path.with_suffix(".md").write_text("\n".join(markdown(report)) + "\n")
    print(f"wrote {path} and {path.with_suffix('.md')}")

"""Report plumbing shared by train_fp8.py and bench_linear.py (no torch).

A report is a JSON object; its markdown and PNG are rendered from it alone,
so `--render REPORT.json` rewrites them on a machine without a GPU or torch.
"""

import json
import math
import re
import sys
from pathlib import Path

# How the project's sm_90a kernels are launched, said beside every
# back-to-back timing of them.
PROGRAMMATIC_LAUNCH_NOTE = (
    "fp8-mlir's sm_90a kernels are launched with programmatic stream serialization: "
    "back to back, each call's launch and prologue overlap the end of the call before "
    "it (the peers' kernels, as torch and DeepGEMM launch them, start after it ends)")


def fmt(value, spec=".3f"):
    """A number for a table; "n/a" for None, NaN or inf."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return format(value, spec)


def kernel_tag(name):
    """A kernel name's part from its tile on (t128x192x128_s4_fast): what
    tells the kernels of one GEMM apart."""
    tile = re.search(r"_(t\d+x\d+x\d+.*)$", name or "")
    return tile.group(1) if tile else name


def table(header, rows):
    """Markdown table lines."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "/").replace("\n", " ") for c in row) + " |"
              for row in rows]
    return lines


def geomean(values):
    values = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def environment_lines(env):
    """The report header's environment bullets."""
    return [f"- GPU {env.get('gpu', '?')}, driver {env.get('driver', '?')}, CUDA runtime "
            f"{env.get('cuda_runtime', '?')}, torch {env.get('torch', '?')}, "
            f"python {env.get('python', '?')}",
            f"- date {env.get('date', '?')}, host {env.get('host', '?')}",
            f"- command: `{env.get('command', '?')}`"]


def write_outputs(report, json_path, markdown, plot, write_json=True):
    """Writes JSON (unless write_json is false), markdown and, where
    matplotlib is installed, the PNG beside it. Returns the paths written."""
    json_path = Path(json_path)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    written = []
    if write_json:
        json_path.write_text(json.dumps(report, indent=1) + "\n")
        written.append(json_path)
    md_path = json_path.with_suffix(".md")
    md_path.write_text(markdown(report))
    written.append(md_path)
    try:
        import matplotlib
    except ImportError:
        print("note: matplotlib is not installed: no PNG", file=sys.stderr)
        return written
    matplotlib.use("Agg")
    png_path = json_path.with_suffix(".png")
    try:
        plot(report, png_path)
        written.append(png_path)
    except Exception as e:  # the numbers matter more than the chart
        print(f"warning: no PNG: {type(e).__name__}: {e}", file=sys.stderr)
    return written


def render(json_path, markdown, plot):
    """--render: the markdown and PNG of an existing JSON report."""
    report = json.loads(Path(json_path).read_text())
    for path in write_outputs(report, json_path, markdown, plot, write_json=False):
        print(f"wrote {path}")


def main(argv, parse_args, markdown, plot, run):
    """A report script's main: --render, or run(args, torch, environment, now)
    on a CUDA device (the environment as bench_gemm.py records it)."""
    args = parse_args(argv)
    if args.render:
        render(args.render, markdown, plot)
        return 0
    import torch
    if not torch.cuda.is_available():
        print("error: no CUDA device visible to torch", file=sys.stderr)
        return 2
    import datetime

    import bench_gemm
    now = datetime.datetime.now().astimezone()
    return run(args, torch, bench_gemm.environment(now), now)


def report_path(out_dir, kind, env, now):
    """OUT/<kind>-<gpu model>-<date>.json, as bench_gemm.py names its reports."""
    gpu = "".join(c if c.isalnum() else "-" for c in env.get("gpu", "gpu").lower())
    gpu = "-".join(part for part in gpu.split("-") if part) or "gpu"
    return Path(out_dir) / f"{kind}-{gpu}-{now.strftime('%Y%m%d-%H%M%S')}.json"


def parse_arguments(parser, argv, default_out):
    """parser's arguments plus --out and --render."""
    parser.add_argument("--out", type=Path, default=default_out, help="report directory")
    parser.add_argument("--render", type=Path, metavar="JSON",
                        help="rewrite the .md and .png of this report (no GPU needed)")
    return parser.parse_args(argv)


def one_of(allowed):
    """A parse_list converter accepting the names in `allowed`."""
    def convert(text):
        if text not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return text
    return convert


def parse_list(text, convert, what):
    """A comma-separated list, each item converted; ValueError names the bad one."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ValueError(f"{what}: empty list")
    out = []
    for item in items:
        try:
            out.append(convert(item))
        except ValueError as e:
            raise ValueError(f"{what}: {item!r}: {e}") from None
    return out

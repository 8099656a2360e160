"""Timing methods of bench/launch_overhead.py (torch is passed in; nothing
here imports it).

- Host time per call: ``time.perf_counter`` around N back-to-back calls
  (``host_block``), with the time the GPU needed after the last submission
  to finish (the drain): a GPU that kept up drains in one kernel and a
  synchronize; one that fell behind drains its backlog. The samples of all
  implementations are taken interleaved, round after round in one process
  (``interleaved``), after a warm-up of all of them, so that a drift of the
  host over time moves every implementation alike.
- GPU time per call (``queued_gpu_us``): CUDA events around N calls queued
  behind a GPU spin (``torch.cuda._sleep``), so the GPU runs them back to
  back without waiting for the host; valid only when the host queued all N
  before the spin ended, which it checks (and retries with a longer spin).
- Synchronous latency (``synchronous_us``): ``perf_counter`` around one call
  and ``torch.cuda.synchronize()``, implementations alternating call by
  call.
"""

import statistics
import time

SPIN_CYCLES = 50_000_000  # torch.cuda._sleep: ~25-40 ms of GPU spinning
# A drain longer than this means the GPU had a backlog when the host
# stopped submitting: the host may have waited on a full launch queue.
DRAIN_LIMIT_US = 250.0


def host_block(torch, fn, calls):
    """(host us per call, drain us) of `calls` back-to-back calls of fn()."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    return (t1 - t0) / calls * 1e6, (t2 - t1) * 1e6


def interleaved(torch, fns, calls, rounds, warmup_s=2.0, probe=None):
    """{name: [(seconds since the first sample, host us per call, drain us,
    probe())]}: one host_block of every implementation per round, in an
    order that rotates and reverses from round to round; a warm-up of at
    least `warmup_s` seconds runs all of them first (kernels loaded, caches
    and clocks settled). `probe` (optional, e.g. the GPU's SM clock) is read
    after each sample, outside the timed region."""
    names = list(fns)
    deadline = time.perf_counter() + warmup_s
    while True:
        for name in names:
            host_block(torch, fns[name], max(calls // 10, 20))
        if time.perf_counter() >= deadline:
            break
    samples = {name: [] for name in names}
    start = time.perf_counter()
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in (order if r % 2 == 0 else order[::-1]):
            host, drain = host_block(torch, fns[name], calls)
            samples[name].append((time.perf_counter() - start, host, drain,
                                  probe() if probe else None))
    return samples


def summarize(samples):
    """median, min and max host us per call, the longest drain, and the
    probe's range (None without one)."""
    hosts = [s[1] for s in samples]
    probes = [s[3] for s in samples if len(s) > 3 and s[3] is not None]
    return {"host_us": statistics.median(hosts), "host_min_us": min(hosts),
            "host_max_us": max(hosts), "drain_max_us": max(s[2] for s in samples),
            "probe_range": [min(probes), max(probes)] if probes else None}


def sm_clock_probe(torch):
    """A probe reading the GPU's SM clock in MHz (torch.cuda.clock_rate,
    through NVML), or None where it is unavailable."""
    try:
        torch.cuda.clock_rate()
    except Exception:  # noqa: BLE001 (no pynvml, no NVML)
        return None
    return lambda: torch.cuda.clock_rate()


def queued_gpu_us(torch, fn, calls, copies=1, cycles=SPIN_CYCLES):
    """GPU us per call of fn(i) (i rotating over `copies`) run back to back
    behind a spin, or None when the host could not queue the calls before
    the spin ended (three tries, each spinning 4x longer)."""
    events = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
    for _ in range(3):
        torch.cuda.synchronize()
        events[0].record()
        torch.cuda._sleep(cycles)
        events[1].record()
        t0 = time.perf_counter()
        for r in range(calls):
            fn(r % copies)
        submitted_ms = (time.perf_counter() - t0) * 1e3
        events[2].record()
        torch.cuda.synchronize()
        if submitted_ms < 0.8 * events[0].elapsed_time(events[1]):
            return events[1].elapsed_time(events[2]) / calls * 1e3
        cycles *= 4
    return None


def synchronous_us(torch, fns, copies, repeats):
    """{name: median us of one call of fn(i) and a synchronize}, the
    implementations alternating call by call (one warm-up call each)."""
    names = list(fns)
    for name in names:
        fns[name](0)
    torch.cuda.synchronize()
    times = {name: [] for name in names}
    for r in range(repeats):
        for name in (names if r % 2 == 0 else names[::-1]):
            t0 = time.perf_counter()
            fns[name](r % copies)
            torch.cuda.synchronize()
            times[name].append((time.perf_counter() - t0) * 1e6)
    return {name: statistics.median(v) for name, v in times.items()}

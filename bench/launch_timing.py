"""Timing methods of bench/launch_overhead.py (torch is passed in; nothing
here imports it).

- Host time per call: ``time.perf_counter`` around N back-to-back calls
  (``host_block``), with the time the GPU needed after the last submission
  to finish (the drain): a GPU that kept up drains in one kernel and a
  synchronize; one that fell behind drains its backlog. The samples of all
  implementations are taken interleaved, round after round in one process
  (``interleaved``), after a warm-up of all of them, so that a drift of the
  host over time moves every implementation alike.
- GPU time per call and pure host time per call (``queued``): N calls
  queued behind a GPU spin (``torch.cuda._sleep``). CUDA events around the
  calls give the GPU time (the GPU runs them back to back without waiting
  for the host); perf_counter around their submission gives a host time
  that cannot include waiting on them (the GPU was spinning). Valid only
  when the host queued all N before the spin ended, which it checks. The
  host time of N back-to-back calls is host-bound when it agrees with this
  one (``host_bound``).
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
# Back-to-back host time within this factor (plus 1 us) of the host time
# with the GPU held back: the host did not wait on the GPU.
HELD_TOLERANCE = 1.2


def host_bound(host_us, drain_max_us, held):
    """Whether `host_us` (back-to-back) is the host's own cost: no long
    drain, the GPU faster than the host, and the same host time as with the
    GPU held back (`held`: queued()'s result, or None when unmeasured)."""
    if held is None:
        return False
    return (drain_max_us <= DRAIN_LIMIT_US and held["gpu_us"] < host_us
            and host_us <= HELD_TOLERANCE * held["host_us"] + 1.0)


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


def estimate_ms(torch, call, count):
    """A first GPU time per call (ms): `call(i)` for i < count once, timed
    by CUDA events (a warm-up that sizes the real measurement)."""
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for i in range(count):
        call(i)
    end.record()
    end.synchronize()
    return begin.elapsed_time(end) / count


def queued(torch, fn, calls, copies=1, cycles=SPIN_CYCLES):
    """{"gpu_us", "host_us", "calls"}: `calls` calls of fn(i) (i rotating
    over `copies`) queued behind a GPU spin. The GPU then runs them back to
    back (gpu_us: GPU time per call), and the host queued them while the
    GPU was held back by the spin, so it cannot have waited on our kernels
    (host_us: pure host time per call). Valid only when the host queued all
    of them before the spin ended; otherwise (a spin too short, or a launch
    queue too shallow to hold them) it tries again with twice the spin and
    half the calls, three times, then returns None."""
    events = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
    for _ in range(4):
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
            return {"gpu_us": events[1].elapsed_time(events[2]) / calls * 1e3,
                    "host_us": submitted_ms / calls * 1e3, "calls": calls}
        cycles *= 2
        calls = max(calls // 2, 1)
    return None


def queued_gpu_us(torch, fn, calls, copies=1):
    """queued()'s GPU time per call, or None."""
    result = queued(torch, fn, calls, copies)
    return None if result is None else result["gpu_us"]


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

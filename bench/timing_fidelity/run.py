"""Timing fidelity: one kernel timed four ways in one run (issue 3's benchmark).

  kbench    CUPTI device time of the call, every stream (the engine's Tracer), L2 flushed
  events    KernelBench style: CUDA events on the current stream around the call, L2 flushed
  do_bench  triton.testing.do_bench (its own L2 flush), median
  ncu       Nsight Compute's gpu__time_duration.sum of the call's kernels (a second process,
            `--ncu-child`, run under ncu with --clock-control none and --cache-control all)

Plus repeatability: the kbench median taken five times in a row per kernel (in this process),
and its coefficient of variation. Every measurement starts after COOL_S seconds of idle GPU and
NVML's clocks are read after it, so a power-bound kernel (the fp16 matmul) is not timed hotter
by whichever method happens to run later. Writes a JSON and a markdown table to --out.
Usage (GPU machine, from the repository root): bash bench/timing_fidelity/run.sh OUT_DIR
"""

import argparse
import csv
import io
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cases import make_cases  # noqa: E402

SAMPLES = 50
NCU_REPS = 5
COOL_S = 2.0


def flush_zero_only(flush):
    """NVBench's flush: an L2-sized memset. It leaves L2 full of dirty lines."""
    flush[0].zero_()


def flush_l2(flush):
    """kbench's flush (measurement.py): the zeroing, then a read of a clean buffer twice the L2's
    size, which evicts the dirty lines before the timed call instead of during it."""
    buffer, clean = flush
    buffer.zero_()
    clean.sum()


def cooled(clocks, measure):
    """Runs measure() after an idle pause; returns (its result, NVML's clocks just after it)."""
    torch.cuda.synchronize()
    time.sleep(COOL_S)
    value = measure()
    torch.cuda.synchronize()
    return value, clocks.read() if clocks else None


def time_kbench(tracer, fn, flush, flush_fn=flush_l2, redraw=None):
    """kbench's per-call sequence: a fresh input set (`redraw`, as the timing loop draws one for
    every call), the flush, a synchronise, the call, a synchronise."""
    windows = []
    for _ in range(SAMPLES):
        if redraw is not None:
            redraw()
        flush_fn(flush)
        torch.cuda.synchronize()
        start = tracer.now_ns()
        fn()
        torch.cuda.synchronize()
        windows.append((start, tracer.now_ns()))
    return [s["device_us"] for s in tracer.summarize(windows, 0xFFFFFFFF, [])]


def time_events(fn, flush):
    samples = []
    for _ in range(SAMPLES):
        flush_l2(flush)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(end) * 1000.0)
    return samples


def time_do_bench(fn):
    import triton.testing

    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median") * 1000.0


def ncu_child(cases):
    """Under ncu: each call preceded by a spin kernel, which separates the calls in the report."""
    for name, fn in cases.items():
        for _ in range(NCU_REPS):
            torch.cuda._sleep(100)
            fn()
        torch.cuda.synchronize()


def ncu_medians(names):
    command = [
        "ncu", "--metrics", "gpu__time_duration.sum", "--csv", "--clock-control", "none",
        "--cache-control", "all", sys.executable, __file__, "--ncu-child",
    ]
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=150)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {}, -1, f"ncu did not complete: {exc}"
    rows = [r for r in csv.DictReader(io.StringIO(_csv_part(run.stdout))) if r.get("Metric Name") == "gpu__time_duration.sum"]
    scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
    calls, current = [], None
    for row in rows:
        unit = row["Metric Unit"]
        if unit not in scale:
            raise SystemExit(f"ncu reported gpu__time_duration in an unknown unit {unit!r}")
        us = float(row["Metric Value"].replace(",", "")) * scale[unit]
        if "sleep" in row["Kernel Name"] or "spin" in row["Kernel Name"]:
            current = []
            calls.append(current)
        elif current is not None:
            current.append(us)
    per_case = {}
    for i, name in enumerate(names):
        chunk = [sum(c) for c in calls[i * NCU_REPS:(i + 1) * NCU_REPS] if c]
        per_case[name] = statistics.median(chunk) if chunk else None
    return per_case, run.returncode, run.stderr[-2000:]


def _csv_part(text):
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith('"ID"'):
            return "\n".join(lines[i:])
    return ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ncu-child", action="store_true")
    parser.add_argument("--out", default="bench-out")
    args = parser.parse_args()
    device = torch.device("cuda:0")
    torch.backends.cuda.matmul.allow_tf32 = False
    cases, redraws = make_cases(device)
    for fn in cases.values():
        fn()
    torch.cuda.synchronize()
    if args.ncu_child:
        ncu_child(cases)
        return

    from kbench.worker.tracing import Tracer

    tracer = Tracer(device)
    if not tracer.active:
        sys.exit(f"CUPTI is not available: {tracer.reason}")
    l2 = torch.cuda.get_device_properties(device).L2_cache_size
    flush = (torch.empty(l2, dtype=torch.uint8, device=device),
             torch.ones(2 * l2 // 4, dtype=torch.float32, device=device))
    from kbench.worker.tracing import Clocks

    clocks = Clocks(device)
    clocks = None if clocks.reason else clocks
    results = {}
    for name, fn in cases.items():
        measured, after = {}, {}
        methods = {
            "kbench_us": lambda: statistics.median(time_kbench(tracer, fn, flush, redraw=redraws.get(name))),
            "kbench_zero_flush_us": lambda: statistics.median(
                time_kbench(tracer, fn, flush, flush_zero_only, redraws.get(name))),
            "events_us": lambda: statistics.median(time_events(fn, flush)),
            "do_bench_us": lambda: time_do_bench(fn),
            "kbench_repeat_medians_us": lambda: [
                statistics.median(time_kbench(tracer, fn, flush, redraw=redraws.get(name))) for _ in range(5)],
        }
        for key, measure in methods.items():
            measured[key], after[key] = cooled(clocks, measure)
        repeats = measured["kbench_repeat_medians_us"]
        measured["kbench_repeat_cv_pct"] = statistics.stdev(repeats) / statistics.mean(repeats) * 100.0
        measured["clocks_after"] = after
        results[name] = measured
        print(name, {k: v for k, v in measured.items() if k not in ("kbench_repeat_medians_us", "clocks_after")}, flush=True)
    meta = {
        "gpu": torch.cuda.get_device_name(device),
        "torch": torch.__version__,
        "tracing_overhead_us": tracer.measure_overhead(device),
        "samples": SAMPLES,
        "cool_s": COOL_S,
    }
    write(Path(args.out), meta, results)  # kept even if ncu does not finish
    torch.cuda.synchronize()
    time.sleep(COOL_S)
    ncu, meta["ncu_returncode"], meta["ncu_stderr_tail"] = ncu_medians(list(cases))
    for name in cases:
        results[name]["ncu_us"] = ncu.get(name)
    print(write(Path(args.out), meta, results))
    print(json.dumps(meta, indent=1)[:1500])


def clock_range(after):
    readings = [c for c in after.values() if c]
    if not readings:
        return "-"
    sm = sorted(c["sm_mhz"] for c in readings)
    mem = sorted(c["mem_mhz"] for c in readings)
    reasons = sorted({r for c in readings for r in c["reasons"]})
    return f"{sm[0]}-{sm[-1]} / {mem[0]}-{mem[-1]} MHz" + (f" ({', '.join(reasons)})" if reasons else "")


def write(out, meta, results):
    out.mkdir(parents=True, exist_ok=True)
    (out / "timing_fidelity.json").write_text(json.dumps({"meta": meta, "cases": results}, indent=1))
    lines = [
        "| kernel | ncu | kbench (CUPTI) | kbench / ncu | kbench, zero-only flush | zero-only / ncu "
        "| CUDA events | do_bench | kbench repeat CV | SM / memory clock after each method |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, r in results.items():
        ratio = f"{r['kbench_us'] / r['ncu_us']:.3f}" if r.get("ncu_us") else "-"
        ncu_text = f"{r['ncu_us']:.2f} µs" if r.get("ncu_us") else "-"
        zero_ratio = f"{r['kbench_zero_flush_us'] / r['ncu_us']:.3f}" if r.get("ncu_us") else "-"
        lines.append(
            f"| {name} | {ncu_text} | {r['kbench_us']:.2f} µs | {ratio} | {r['kbench_zero_flush_us']:.2f} µs "
            f"| {zero_ratio} | {r['events_us']:.2f} µs "
            f"| {r['do_bench_us']:.2f} µs | {r['kbench_repeat_cv_pct']:.2f} % | {clock_range(r['clocks_after'])} |"
        )
    text = "\n".join(lines) + "\n"
    (out / "timing_fidelity.md").write_text(text)
    return text


if __name__ == "__main__":
    main()

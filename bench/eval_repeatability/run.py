"""Repeatability and cost of whole evaluations (issue 3's second and third benchmarks).

Repeatability: the same `kbench eval` run several times in a row (fresh processes each time);
the coefficient of variation of the reported candidate and reference medians and of the speedup.
Cost: the measure phase's wall time (`timing.wall_s`) per evaluation, against the kernel's time.
With --baseline-kbench (another build, e.g. the commit before a change to the timing loop), every
run of every case is made with both binaries in turn, and the table gives the ratio of their
measure phases: the baseline is measured in the same run, on the same GPU, minutes apart.

Cases: the seed's masked broadcast at its 18x44 shape (launch-bound, a few µs) and at the
bundled problem's 16384x4096 (about 190 µs), with examples/cuda/popcorn_broadcast_masked_from_row0.py;
ReLU over ROWS x 8192 fp32 sized for about 20 µs, 100 µs and 500 µs on an H200, with
examples/cuda/level1_relu.py. Problems of other sizes are generated from the bundled ones. Writes eval_repeatability.json and eval_repeatability.md.
Usage (GPU machine): python3 bench/eval_repeatability/run.py --kbench build-gpu/kbench --out DIR
"""

import argparse
import json
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RELU_ROWS = {"relu_20us": 1280, "relu_100us": 6400, "relu_500us": 32768}
MASKED = ROOT / "problems/popcorn/1_broadcast_masked_from_row0.py"
MASKED_SHAPES = {"tiny_masked_broadcast": (18, 44), "masked_broadcast_190us": (16384, 4096)}


def relu_problem(directory, rows):
    path = directory / f"relu_{rows}x8192.py"
    text = (ROOT / "problems/level1/1_relu.py").read_text()
    path.write_text(text.replace("BATCH = 4096", f"BATCH = {rows}"))
    return path


def masked_problem(directory, rows, cols):
    path = directory / f"masked_broadcast_{rows}x{cols}.py"
    text = MASKED.read_text()
    if "B = 16384\nD = 4096\n" not in text:
        raise SystemExit(f"{MASKED}: its shape constants changed; update MASKED_SHAPES' generator")
    path.write_text(text.replace("B = 16384\nD = 4096\n", f"B = {rows}\nD = {cols}\n"))
    return path


def case_files(name, directory):
    if name in MASKED_SHAPES:
        return (masked_problem(directory, *MASKED_SHAPES[name]),
                ROOT / "examples/cuda/popcorn_broadcast_masked_from_row0.py")
    if name in RELU_ROWS:
        return relu_problem(directory, RELU_ROWS[name]), ROOT / "examples/cuda/level1_relu.py"
    raise SystemExit(f"unknown case {name!r}: choose from {', '.join([*MASKED_SHAPES, *RELU_ROWS])}")


def evaluate(kbench, problem, candidate, out_json, extra):
    command = [str(kbench), "eval", str(problem), str(candidate), "--device", "cuda",
               "--json", str(out_json), "--quiet", *extra]
    start = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - start
    if not out_json.exists():
        return {"status": f"no result (exit {run.returncode}): {run.stderr[-500:]}", "wall_s": wall}
    doc = json.loads(out_json.read_text())
    timing = doc.get("timing") or {}
    cand, ref = timing.get("candidate") or {}, timing.get("reference") or {}
    return {
        "status": doc.get("status"),
        "wall_s": wall,
        "measure_wall_s": timing.get("wall_s"),
        "candidate_median_us": (cand.get("stats") or {}).get("median_us"),
        "candidate_noise_pct": (cand.get("stats") or {}).get("noise_pct"),
        "candidate_n": (cand.get("stats") or {}).get("n"),
        "candidate_stop": cand.get("stop_reason"),
        "reference_median_us": (ref.get("stats") or {}).get("median_us"),
        "reference_stop": ref.get("stop_reason"),
        "speedup": timing.get("speedup"),
    }


def cv_pct(values):
    values = [v for v in values if v]
    if len(values) < 2:
        return None
    return statistics.stdev(values) / statistics.mean(values) * 100.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kbench", default=str(ROOT / "build-gpu/kbench"))
    parser.add_argument("--out", default="bench-out")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeat-cases", default="tiny_masked_broadcast,relu_20us,relu_100us")
    parser.add_argument("--cost-cases", default="relu_500us")
    parser.add_argument("--extra", default="", help="extra kbench eval arguments, space-separated")
    parser.add_argument("--baseline-kbench", default="",
                        help="a second kbench binary: each run is repeated with it, for the cost ratio")
    args = parser.parse_args()
    out = Path(args.out)
    (out / "problems").mkdir(parents=True, exist_ok=True)
    extra = args.extra.split()
    plan = [(c, args.runs) for c in args.repeat_cases.split(",") if c]
    plan += [(c, 1) for c in args.cost_cases.split(",") if c]
    results, baseline = {}, {}
    for name, runs in plan:
        problem, candidate = case_files(name, out / "problems")
        results[name], baseline[name] = [], []
        for i in range(runs):
            if args.baseline_kbench:
                baseline[name].append(evaluate(args.baseline_kbench, problem, candidate,
                                               out / f"{name}.{i}.baseline.json", extra))
                print(name, "baseline", json.dumps(baseline[name][-1]), flush=True)
            results[name].append(evaluate(args.kbench, problem, candidate, out / f"{name}.{i}.json", extra))
            print(name, json.dumps(results[name][-1]), flush=True)
            write(out, extra, results, baseline)  # kept if a later run does not finish
    print(write(out, extra, results, baseline))


def cost_table(results, baseline):
    """Measure-phase wall time of each case, this build against the baseline's."""
    lines = ["", "| case | measure phase (median) | baseline's | ratio | candidate samples | baseline's |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name, runs in results.items():
        ours = [r["measure_wall_s"] for r in runs if r.get("status") == "ok" and r.get("measure_wall_s")]
        theirs = [r["measure_wall_s"] for r in baseline.get(name, [])
                  if r.get("status") == "ok" and r.get("measure_wall_s")]
        if not ours or not theirs:
            lines.append(f"| {name} | - | - | - | - | - |")
            continue
        a, b = statistics.median(ours), statistics.median(theirs)
        n_ours = statistics.median([r.get("candidate_n") or 0 for r in runs if r.get("status") == "ok"])
        n_theirs = statistics.median([r.get("candidate_n") or 0 for r in baseline[name] if r.get("status") == "ok"])
        lines.append(f"| {name} | {a:.2f} s | {b:.2f} s | {a / b:.3f} | {n_ours:.0f} | {n_theirs:.0f} |")
    return "\n".join(lines) + "\n"


def write(out, extra, results, baseline=None):
    baseline = baseline or {}
    (out / "eval_repeatability.json").write_text(
        json.dumps({"extra": extra, "cases": results, "baseline": baseline}, indent=1))
    lines = ["| case | runs | candidate median (mean of runs) | CV candidate | CV reference | CV speedup "
             "| stop reasons | measure phase wall (median) | evaluation wall (median) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, runs in results.items():
        ok = [r for r in runs if r.get("status") == "ok"]
        fmt = lambda v, unit="": "-" if v is None else f"{v:.2f}{unit}"  # noqa: E731
        med = statistics.mean([r["candidate_median_us"] for r in ok]) if ok else None
        lines.append(
            f"| {name} | {len(ok)}/{len(runs)} ok | {fmt(med, ' µs')} "
            f"| {fmt(cv_pct([r['candidate_median_us'] for r in ok]), ' %')} "
            f"| {fmt(cv_pct([r['reference_median_us'] for r in ok]), ' %')} "
            f"| {fmt(cv_pct([r['speedup'] for r in ok]), ' %')} "
            f"| {', '.join(sorted({str(r.get('candidate_stop')) for r in ok}))} "
            f"| {fmt(statistics.median([r['measure_wall_s'] for r in ok]) if ok else None, ' s')} "
            f"| {fmt(statistics.median([r['wall_s'] for r in ok]) if ok else None, ' s')} |")
    text = "\n".join(lines) + "\n"
    if any(baseline.values()):
        text += cost_table(results, baseline)
    (out / "eval_repeatability.md").write_text(text)
    return text


if __name__ == "__main__":
    main()

"""bench/throughput: evaluations per hour, GPU busy fraction and harness time per evaluation,
kbench against KernelBench's own flow on the same mixed batch (batch.py), in one run on the GPU
machine (issue 15's proof).

Usage (after building kbench; KernelBench is a checkout or `git archive` of
ScalingIntelligence/KernelBench, its src/kernelbench is used unmodified):
  python3 bench/throughput/run.py --kbench build-gpu/kbench --kernelbench KB_DIR --out OUT
      [--deps DIR] [--budget-s 240] [--flows kbench,kernelbench] [--limit N]
--deps: a directory of Python packages KernelBench imports that the machine lacks (pydantic,
requests, dotenv, tqdm), appended to its PYTHONPATH; openai and litellm, imported by
kernelbench.utils for generation only, come from kb_stubs/. Each flow stops starting new
evaluations after --budget-s; both take the batch in the same shuffled order, so the figures
are over the same mix. Writes throughput.json and throughput.md under OUT.
KernelBench's flow over the whole batch takes longer than one device call: `--flows
kernelbench-precompile` runs its precompile alone and records its time under OUT/kb-builds; a
later `--flows kernelbench` with the same OUT evaluates against those builds, and its window
(and so its rate) includes the recorded precompile."""

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from batch import KINDS, write_batch  # noqa: E402
from flows import run_kbench, run_kernelbench  # noqa: E402
from gpu_busy import BusySampler  # noqa: E402


def summarize(name, flow, busy_fraction):
    """The figures of one flow: `flow` holds its window (start, end) and per-evaluation records."""
    records = flow["records"]
    wall = max(flow["end"] - flow["start"], 1e-9)
    n = len(records)
    busy_s = busy_fraction * wall if busy_fraction is not None else None
    summary = {
        "flow": name, "evaluated": n, "wall_s": wall, "evals_per_hour": n / wall * 3600 if n else 0.0,
        "gpu_busy_fraction": busy_fraction,
        "gpu_idle_s_per_eval": (wall - busy_s) / n if n and busy_s is not None else None,
        "build_wall_s": flow.get("build_wall_s"),
        "outcomes": {kind: dict(Counter(r["outcome"] for r in records if r["kind"] == kind)) for kind in KINDS},
        "finished_batch": flow["finished_batch"],
        "precompile_from_earlier_run": flow.get("precompile_from_earlier_run", False),
    }
    walls = [r["wall_s"] for r in records if r.get("wall_s") is not None]
    summary["median_eval_wall_s"] = statistics.median(walls) if walls else None
    # Evaluations under way on average, against the suite's lanes: far fewer means the lanes
    # waited (for builds ahead, when the first result also comes late), not the GPU.
    summary["evals_in_progress"] = sum(walls) / wall if walls else None
    done = [r["at"] for r in records if r.get("at") is not None]
    summary["first_result_s"] = min(done) if done else None
    warm = [r["wall_s"] for r in records if r["kind"] == "ok" and r.get("cached_build")]
    summary["median_warm_ok_wall_s"] = statistics.median(warm) if warm else None
    return summary


def markdown(summaries, batch_size, problems):
    rows = ["| flow | evaluated | wall | evals / GPU-hour | GPU busy | GPU-idle s / eval | median eval | under way | first result | builds first |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for s in summaries:
        busy = f"{s['gpu_busy_fraction'] * 100:.0f} %" if s["gpu_busy_fraction"] is not None else "n/a"
        idle = f"{s['gpu_idle_s_per_eval']:.2f} s" if s["gpu_idle_s_per_eval"] is not None else "n/a"
        median = f"{s['median_eval_wall_s']:.2f} s" if s["median_eval_wall_s"] is not None else "n/a"
        build = f"{s['build_wall_s']:.0f} s" if s.get("build_wall_s") is not None else "overlapped"
        if s.get("precompile_from_earlier_run"):
            build += " (an earlier run)"
        under_way = f"{s['evals_in_progress']:.1f}" if s.get("evals_in_progress") is not None else "n/a"
        first = f"{s['first_result_s']:.0f} s" if s.get("first_result_s") is not None else "n/a"
        rows.append(f"| {s['flow']} | {s['evaluated']} of {batch_size}{'' if s['finished_batch'] else ' (budget)'} "
                    f"| {s['wall_s']:.0f} s | {s['evals_per_hour']:.0f} | {busy} | {idle} | {median} "
                    f"| {under_way} | {first} | {build} |")
    if len(summaries) == 2 and summaries[1]["evals_per_hour"]:
        rows.append(f"\nkbench / KernelBench, evaluations per hour: "
                    f"{summaries[0]['evals_per_hour'] / summaries[1]['evals_per_hour']:.2f}x")
    rows.append(f"\nBatch: {batch_size} candidates over {problems} problems (ok, wrong, crash each).")
    for s in summaries:
        rows.append(f"- {s['flow']} outcomes by kind: {json.dumps(s['outcomes'])}"
                    + (f"; warm `ok` evaluation, median wall {s['median_warm_ok_wall_s']:.2f} s"
                       if s.get("median_warm_ok_wall_s") else ""))
    return "\n".join(rows) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kbench", default="build/kbench")
    parser.add_argument("--kernelbench", type=Path)
    parser.add_argument("--deps", type=Path)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--budget-s", type=float, default=240)
    parser.add_argument("--flows", default="kbench,kernelbench")
    parser.add_argument("--limit", type=int, default=0, help="only the first N of the shuffled batch")
    parser.add_argument("--jobs", type=int, default=16, help="KernelBench's parallel precompile")
    parser.add_argument("--kbench-extra", default="--rules structural --no-compile-baseline",
                        help="kbench suite flags (default: the structural rules, as KernelBench has no "
                             "rule on whose kernels do the work; no torch.compile baseline, which "
                             "KernelBench does not time)")
    args = parser.parse_args()
    root = HERE.parent.parent
    batch = write_batch(root, args.out / "batch")
    problems = len({e["problem"] for e in batch})
    if args.limit:
        batch = batch[: args.limit]
    sampler = BusySampler()
    summaries = []
    for name in args.flows.split(","):
        if name == "kbench":
            flow = run_kbench(args.kbench, batch, args.out, args.budget_s, args.kbench_extra.split())
        elif name in ("kernelbench", "kernelbench-precompile"):
            if not args.kernelbench:
                parser.error("--kernelbench KB_DIR is needed for the kernelbench flow")
            flow = run_kernelbench(args.kernelbench, args.python, args.deps, batch, args.out,
                                   args.budget_s, args.jobs, precompile_only=name != "kernelbench")
            if name != "kernelbench":
                print(f"kernelbench precompile: {flow['builds']} sources in {flow['build_wall_s']:.0f} s, "
                      f"{flow['builds_failed']} failed; `--flows kernelbench` with this --out evaluates", flush=True)
                continue
        else:
            parser.error(f"unknown flow {name!r}: kbench, kernelbench or kernelbench-precompile")
        busy = sampler.fraction(flow["start"], flow["end"])
        if flow.get("precompile_from_earlier_run") and busy is not None:
            # That precompile was CPU work this sampler did not see: its seconds count as idle.
            evaluating = flow["end"] - flow["start"] - flow["build_wall_s"]
            busy *= max(evaluating, 0.0) / max(flow["end"] - flow["start"], 1e-9)
        summaries.append(summarize(name, flow, busy))
        (args.out / f"{name}-records.json").write_text(json.dumps(flow["records"], indent=1))
        (args.out / "throughput.json").write_text(json.dumps(summaries, indent=1))
        print(markdown(summaries, len(batch), problems), flush=True)
    sampler.stop()
    (args.out / "throughput.md").write_text(markdown(summaries, len(batch), problems))


if __name__ == "__main__":
    main()

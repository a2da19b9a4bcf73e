"""Per-problem cost of `kbench problems check` over a batch (issue 16, item 2), in one run:
  separate: one `kbench problems check` process per problem, --jobs of them at a time (what
            scripts/compat/run_checks.py did before): every process starts its own fork server
            and imports torch;
  batched:  one `kbench problems check --jobs N` over all of them: one fork server, every worker
            forked from it.
Both check the same problems under the same settings, each with a cache directory of its own;
the verdicts must agree. Prints wall time per problem of each and the ratio separate/batched.
Usage: python3 bench/problems_check/run.py [--kbench build/kbench] [--device cpu] [--jobs 2]
       [--trials 2] [--variant standard] [PROBLEM ...]   (default: 8 bundled problems)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ["level1/1_relu.py", "level1/3_softmax.py", "level1/4_layer_norm.py",
           "level1/5_sum_reduction.py", "level1/6_cumsum.py", "level1/13_scale_shift.py",
           "level2/2_matmul_scale_residual.py", "level3/3_attention_block.py"]


def command(args, problems, json_path):
    return [args.kbench, "problems", "check", *problems, "--device", args.device, "--gpu",
            str(args.gpu), "--variant", args.variant, "--trials", str(args.trials), "--json",
            str(json_path)]


def run(cmd, cache):
    env = dict(os.environ, KBENCH_CACHE_DIR=str(cache))
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1, 2):
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done


def verdicts(paths):
    out = {}
    for path in paths:
        for r in json.loads(Path(path).read_text()):
            out[r["problem"]["path"]] = (r["verdict"], [f["check"] for f in r["findings"]],
                                         r.get("worker_started"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kbench", default=str(ROOT / "build/kbench"))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--variant", default="standard")
    ap.add_argument("problems", nargs="*")
    args = ap.parse_args()
    problems = [str(Path(p).resolve()) for p in args.problems] or \
        [str(ROOT / "problems" / p) for p in DEFAULT]
    with tempfile.TemporaryDirectory(prefix="kbench-bench-pcheck-") as tmp:
        tmp = Path(tmp)
        # Warm the page cache and the interpreter's bytecode alike for both: not counted.
        run(command(args, problems[:1], tmp / "warm.json"), tmp / "cache-warm")

        start = time.perf_counter()
        singles = [tmp / f"single-{i}.json" for i in range(len(problems))]
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            list(pool.map(lambda i: run(command(args, [problems[i]], singles[i]),
                                        tmp / "cache-separate"), range(len(problems))))
        separate = time.perf_counter() - start

        start = time.perf_counter()
        batch = run(command(args, problems, tmp / "batch.json") + ["--jobs", str(args.jobs)],
                    tmp / "cache-batched")
        batched = time.perf_counter() - start

        a, b = verdicts(singles), verdicts([tmp / "batch.json"])
        same = {k: v[:2] for k, v in a.items()} == {k: v[:2] for k, v in b.items()}
        forked = sum(1 for v in b.values() if v[2] == "forked")
    n = len(problems)
    print(f"{n} problems, --device {args.device} --variant {args.variant} --trials {args.trials}, "
          f"{args.jobs} at a time")
    print(f"separate (one process per problem): {separate:7.1f} s, {separate / n:6.2f} s per problem")
    print(f"batched  (one process, --jobs {args.jobs}):   {batched:7.1f} s, {batched / n:6.2f} s per problem")
    print(f"ratio separate/batched: {separate / batched:.2f}x; verdicts "
          f"{'identical' if same else 'DIFFER'}; {forked}/{n} batched workers forked")
    if not same:
        print(json.dumps({"separate": a, "batched": b}, indent=1), file=sys.stderr)
        print(batch.stderr[-3000:], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

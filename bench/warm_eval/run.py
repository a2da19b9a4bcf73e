"""Cost of a warm correctness-only evaluation against a bare Python process (issue 15, item 3).

Three commands per problem, interleaved round by round so that the machine's load falls on each
alike:
  bare:    a fresh Python that imports torch and runs the reference once (its get_inputs and
           forward);
  forked:  `kbench eval --no-timing --device cpu` of examples/cpu/level1_relu.py, build cached,
           with the fork server (the default): one torch import, each worker forked;
  spawned: the same with KBENCH_FORK_SERVER=off: every worker imports torch itself;
  service: the same through a `kbench serve` started once for the run (`kbench eval --service`):
           its fork server stays warm between evaluations. Each round asks for one trial
           more (6, 7, ...; the others 5) so that the service evaluates it rather than
           answering from its store; the build stays the cached one.
Two problems, both ReLUs on the CPU: `small` (examples/exploits/problem_relu.py, 512 x 1024),
where the evaluation's cost is the harness's own (the issue's target), and `large`
(problems/level1/1_relu.py, 4096 x 8192: 128 MiB in and out per trial), where it is bound by the
data of six trials per side (inputs drawn, saved, read, outputs compared) against the bare
process's one forward. The table gives the median wall time of each command and its ratio to
the bare process (issue target for the forked eval: at most 1.5x). The first round only warms
the caches and is not counted.
With `--device cuda` the candidate is examples/cuda/level1_relu.py (its build cached by the first
round), and with `--timing` every evaluation also times the candidate against the reference (the
default `kbench eval`; issue 15's warm target on the H200: a median of at most 3 s). The bare
process still runs its forward on the CPU: on the GPU it is a reference point, not the target.
Usage: python3 bench/warm_eval/run.py [--kbench build/kbench] [--python PY] [--rounds 5]
                                      [--cases small,large] [--device cpu|cuda] [--timing]
                                      [--keep DIR]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = {"small": ROOT / "examples/exploits/problem_relu.py", "large": ROOT / "problems/level1/1_relu.py"}
CANDIDATES = {"cpu": ROOT / "examples/cpu/level1_relu.py", "cuda": ROOT / "examples/cuda/level1_relu.py"}


def bare(problem):
    """The bare process's program: the problem's module with kbench's `popcorn_pri` stand-in
    (the standard variant's jitter_int is the identity), one forward."""
    return (
        "import importlib.util, types, torch\n"
        f"spec = importlib.util.spec_from_file_location('problem', {str(problem)!r})\n"
        "m = importlib.util.module_from_spec(spec)\n"
        "m.popcorn_pri = types.SimpleNamespace(jitter_int=lambda n: n)\n"
        "spec.loader.exec_module(m)\n"
        "model = m.Model(*m.get_init_inputs())\n"
        "model(*m.get_inputs())\n"
    )


def timed(command, env=None):
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, command))} failed ({done.returncode}):\n"
                 f"{done.stdout[-2000:]}{done.stderr[-3000:]}")
    return wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kbench", default=str(ROOT / "build/kbench"))
    venv = Path.home() / ".cache/kbench/venv/bin/python"  # scripts/setup.sh's, where there is one
    parser.add_argument("--python", default=str(venv if venv.exists() else Path(sys.executable)))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cases", default="small,large", help="comma-separated: small, large")
    parser.add_argument("--device", default="cpu", choices=sorted(CANDIDATES))
    parser.add_argument("--keep", help="write each kbench evaluation's result here (--json), "
                        "for bench/throughput/breakdown.py")
    parser.add_argument("--timing", action="store_true",
                        help="time each evaluation too (without it: --no-timing, correctness only)")
    args = parser.parse_args()
    for case in args.cases.split(","):
        if case not in PROBLEMS:
            parser.error(f"--cases: {case!r} is not one of {', '.join(PROBLEMS)}")
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        service = subprocess.Popen(
            [args.kbench, "serve", "--port", "0", "--jobs", "1", "--db", f"{scratch}/r.sqlite",
             "--python", args.python],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            url = re.search(r"http://127\.0\.0\.1:\d+", service.stdout.readline())
            if not url:
                sys.exit("kbench serve did not start")
            for case in args.cases.split(","):
                run_case(case, PROBLEMS[case], args, url.group(0))
        finally:
            service.terminate()
            service.wait()
    print(f"\nloadavg at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          + ("issue target: forked eval at most 1.5x bare (the small case)" if args.device == "cpu"
             else "issue target: a warm evaluation's median at most 3 s"))


def run_case(case, problem, args, url):
    candidate = CANDIDATES[args.device]
    timing = [] if args.timing else ["--no-timing"]
    label = " ".join(["kbench eval", *timing])
    evaluate = [args.kbench, "eval", str(problem), str(candidate), "--device", args.device,
                *timing, "--quiet", "--python", args.python]
    commands = {
        "bare Python: import torch, run the reference once": ([args.python, "-c", bare(problem)], None),
        f"{label}, fork server (default)": (
            evaluate, {**os.environ, "KBENCH_FORK_SERVER": "on"}),
        f"{label}, KBENCH_FORK_SERVER=off": (
            evaluate, {**os.environ, "KBENCH_FORK_SERVER": "off"}),
        f"{label} --service (a warm kbench serve)": (
            [args.kbench, "eval", str(problem), str(candidate), "--device", args.device, *timing,
             "--service", url, "--trials", "TRIALS"], None),
    }
    walls = {name: [] for name in commands}
    for round_index in range(args.rounds + 1):
        for name, (command, env) in commands.items():
            # A new request for the service each round (see the docstring).
            command = [str(6 + round_index) if a == "TRIALS" else a for a in command]
            if args.keep and command[1] == "eval":
                slug = re.sub(r"[^a-z]+", "-", name.lower()).strip("-")[:40]
                command += ["--json", str(Path(args.keep) / f"{case}-{slug}-{round_index}.json")]
            wall = timed(command, env)
            if round_index > 0:
                walls[name].append(wall)
    bare_median = statistics.median(walls[next(iter(commands))])
    print(f"\n{case}: {problem.relative_to(ROOT)}")
    print(f"| command | median wall (s), {args.rounds} rounds | ratio to bare |")
    print("|---|---|---|")
    for name, values in walls.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} (min {min(values):.2f}, max {max(values):.2f}) "
              f"| {median / bare_median:.2f}x |")


if __name__ == "__main__":
    main()

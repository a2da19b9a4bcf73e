"""Cost of a warm correctness-only evaluation against a bare Python process (issue 15, item 3).

Three commands, interleaved round by round so that the machine's load falls on each alike:
  bare:    a fresh Python that imports torch and runs the reference once
           (problems/level1/1_relu.py, its get_inputs and forward);
  forked:  `kbench eval --no-timing --device cpu` of examples/cpu/level1_relu.py, build cached,
           with the fork server (the default): one torch import, each worker forked;
  spawned: the same with KBENCH_FORK_SERVER=off: every worker imports torch itself.
The table gives the median wall time of each and its ratio to the bare process (issue target for
the forked eval: at most 1.5x). The first round only warms the caches and is not counted.
Usage: python3 bench/warm_eval/run.py [--kbench build/kbench] [--python PY] [--rounds 5]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = ROOT / "problems/level1/1_relu.py"
CANDIDATE = ROOT / "examples/cpu/level1_relu.py"
BARE = (
    "import importlib.util, torch\n"
    f"spec = importlib.util.spec_from_file_location('problem', {str(PROBLEM)!r})\n"
    "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
    "model = m.Model(*m.get_init_inputs())\n"
    "model(*m.get_inputs())\n"
)


def timed(command, env=None):
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, command))} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kbench", default=str(ROOT / "build/kbench"))
    venv = Path.home() / ".cache/kbench/venv/bin/python"  # scripts/setup.sh's, where there is one
    parser.add_argument("--python", default=str(venv if venv.exists() else Path(sys.executable)))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    evaluate = [args.kbench, "eval", str(PROBLEM), str(CANDIDATE), "--device", "cpu",
                "--no-timing", "--quiet", "--python", args.python]
    commands = {
        "bare Python: import torch, run the reference once": ([args.python, "-c", BARE], None),
        "kbench eval --no-timing, fork server (default)": (
            evaluate, {**os.environ, "KBENCH_FORK_SERVER": "on"}),
        "kbench eval --no-timing, KBENCH_FORK_SERVER=off": (
            evaluate, {**os.environ, "KBENCH_FORK_SERVER": "off"}),
    }
    walls = {name: [] for name in commands}
    for round_index in range(args.rounds + 1):
        for name, (command, env) in commands.items():
            wall = timed(command, env)
            if round_index > 0:
                walls[name].append(wall)
    bare = statistics.median(walls[next(iter(commands))])
    print(f"| command | median wall (s), {args.rounds} rounds | ratio to bare |")
    print("|---|---|---|")
    for name, values in walls.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} (min {min(values):.2f}, max {max(values):.2f}) "
              f"| {median / bare:.2f}x |")
    print(f"\nloadavg at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          "issue target: forked eval at most 1.5x bare")


if __name__ == "__main__":
    main()

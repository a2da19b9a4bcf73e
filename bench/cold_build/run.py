"""Cold load_inline build of a candidate, with and without kbench's precompiled torch/extension.h.

Each build runs the candidate file in a fresh interpreter with a fresh TORCH_EXTENSIONS_DIR
(nothing cached but the precompiled header itself, which is built first, once, and timed on its
own), then prints ninja's log: each translation unit's start and end in ms. The candidate's
module code runs (its load_inline call builds); a CUDA extension builds on a machine without a
GPU too, its import just fails afterwards, which is reported and not an error here.

    python bench/cold_build/run.py examples/cuda/level1_relu.py [--pch-root DIR] [--runs 1]

docs/architecture.md, "load_inline build time", holds the figures.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

RUNNER = r"""
import os, runpy, sys, time
from kbench.worker import pch_patch
if os.environ.get("KBENCH_PCH_DIR"):
    pch_patch.install()
start = time.perf_counter()
try:
    runpy.run_path(sys.argv[1])
    outcome = "imported"
except Exception as exc:  # a CUDA extension on a machine without a GPU: built, not loadable
    outcome = f"built, import failed: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
print(f"BUILD {time.perf_counter() - start:.1f} s ({outcome}); pch: {pch_patch.state}")
"""


def ninja_log(extensions):
    lines = []
    for log in Path(extensions).rglob(".ninja_log"):
        for line in log.read_text().splitlines()[1:]:
            start, end, _, target, _ = line.split("\t")
            lines.append(f"  {target:28s} {int(start) / 1000:7.1f} -> {int(end) / 1000:7.1f} s"
                         f"  ({(int(end) - int(start)) / 1000:.1f} s)")
    return "\n".join(lines)


def build(candidate, pch_root):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    env.pop("KBENCH_PCH_DIR", None)
    if pch_root:
        env["KBENCH_PCH_DIR"] = str(pch_root)
    with tempfile.TemporaryDirectory(prefix="kbench-cold-build-") as extensions:
        env["TORCH_EXTENSIONS_DIR"] = extensions
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", RUNNER, str(candidate)], env=env,
                              capture_output=True, text=True)
        wall = time.perf_counter() - start
        said = [line for line in done.stdout.splitlines() if line.startswith("BUILD")]
        print(f"{'with' if pch_root else 'without'} kbench's PCH: wall {wall:.1f} s "
              f"(rc {done.returncode}) {said[0] if said else done.stderr[-800:]}")
        print(ninja_log(extensions))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("candidate", type=Path)
    parser.add_argument("--pch-root", type=Path, help="kbench's PCH cache (default: a fresh one)")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "python"))
    from kbench import pch

    root = args.pch_root or Path(tempfile.mkdtemp(prefix="kbench-pch-"))
    start = time.perf_counter()
    entries = pch.ensure(root, args.candidate)
    print(f"precompiled header(s) ready in {time.perf_counter() - start:.1f} s: {entries}")
    for _ in range(args.runs):
        build(args.candidate, None)
        build(args.candidate, root)


if __name__ == "__main__":
    main()

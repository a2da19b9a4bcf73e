"""Cold load_inline build of a candidate as torch builds it (`stock`), with kbench's CUDA unit
against torch/types.h and nvcc's front ends side by side (`light`, python/kbench/light_nvcc.py
and nvcc_steps.py), with that and kbench's precompiled header of cudafe++'s headers part for
nvcc's host compile (`light+host`, python/kbench/host_pch.py), with the binding unit against
torch/types.h and torch/python.h as well (`light+host+bind`, python/kbench/light_cxx.py), with
both units against kbench's ATen/Functions.h too (`light+host+bind+aten`, python/kbench/
aten_subset.py), with the CUDA unit split into a device unit without torch and a host unit
for the host compiler as well (`light+host+bind+aten+split`, python/kbench/split_build.py:
kbench's default), and with kbench's precompiled torch/extension.h for the binding unit
instead (`light+host+pch`, python/kbench/pch.py, KBENCH_PCH=on; `pch`, `light+pch`
and `light+bind` without one cut or another).

Each build runs the candidate file in a fresh interpreter with a fresh TORCH_EXTENSIONS_DIR
(nothing cached but the precompiled headers), then prints ninja's log: each translation unit's
start and end in ms. The headers are made first, once, as kbench makes them: a build of the
same candidate in a folder of its own asks for them and kbench's builders build them (timed on
their own); any candidate with the same includes and flags uses the same headers. The candidate's
module code runs (its load_inline call builds); a CUDA extension builds on a machine without a
GPU too, its import just fails afterwards, which is reported and not an error here.

    python bench/cold_build/run.py examples/cuda/level1_relu.py
        [--modes stock,light,light+host,light+host+bind,light+host+pch]
                                   [--pch-root DIR] [--runs 1]

Each run builds every mode once, in the order given; the ratios are to `stock` in the same run.
Each build's CPU seconds (user and system, every process it ran) are printed beside its wall
time: in a batch whose builds keep every core busy, they, not the wall time, set the rate.

docs/architecture.md, "load_inline build time", holds the figures.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# kbench's ATen/Functions.h (python/kbench/aten_subset.py), kept between runs: it follows from the
# torch install alone.
ATEN_ROOT = Path.home() / ".cache" / "kbench" / "bench-aten-subset"
MODES = ("stock", "light", "pch", "light+pch", "light+bind", "light+host", "light+host+bind", "light+host+pch",
         "light+host+bind+aten", "light+host+pch+aten", "light+host+bind+aten+split", "light+host+pch+aten+split")

RUNNER = r"""
import os, runpy, sys, time
from pathlib import Path
from kbench import light_cxx, light_nvcc
if os.environ.get("KBENCH_BENCH_LIGHT"):
    light_nvcc.install()
if os.environ.get("KBENCH_BENCH_BIND"):
    light_cxx.install()
start = time.perf_counter()
try:
    runpy.run_path(sys.argv[1])
    outcome = "imported"
except Exception as exc:  # a CUDA extension on a machine without a GPU: built, not loadable
    outcome = f"built, import failed: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
def notes(suffix):
    return [p.read_text().strip() for p in Path(os.environ["TORCH_EXTENSIONS_DIR"]).rglob("*" + suffix)]
print(f"BUILD {time.perf_counter() - start:.1f} s ({outcome}); pch: {notes('.kbench-pch')}; "
      f"cuda unit: {notes('.kbench-header')}; binding unit: {notes('.kbench-binding')}; "
      f"ATen/Functions.h: {notes('.kbench-aten')}")
"""


def ninja_log(extensions):
    lines = []
    for log in Path(extensions).rglob(".ninja_log"):
        for line in log.read_text().splitlines()[1:]:
            start, end, _, target, _ = line.split("\t")
            lines.append(f"  {target:28s} {int(start) / 1000:7.1f} -> {int(end) / 1000:7.1f} s"
                         f"  ({(int(end) - int(start)) / 1000:.1f} s)")
    return "\n".join(lines)


def _children_cpu_s():
    """User and system seconds of every finished child process and its descendants: what a
    batch of builds sharing the cores pays for one, where wall time is what one build alone
    waits."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build(candidate, mode, pch_root, host_root=None, keep=None):
    """Wall and CPU seconds of one cold build of `candidate` in `mode` (`keep`: build there, and
    keep it, rather than in a fresh temporary folder, and return None)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    for name in ("KBENCH_PCH_DIR", "KBENCH_BENCH_LIGHT", "KBENCH_BENCH_BIND", "PYTORCH_NVCC", "KBENCH_HOST_PCH_DIR",
                 "KBENCH_ATEN_SUBSET_DIR"):
        env.pop(name, None)
    if "aten" in mode:
        env["KBENCH_ATEN_SUBSET_DIR"] = str(ATEN_ROOT)
    if "pch" in mode:
        env["KBENCH_PCH_DIR"] = str(pch_root)
    if "light" in mode:
        env["KBENCH_BENCH_LIGHT"] = "1"
    if "bind" in mode or "pch" in mode:  # light_cxx.py is what loads the precompiled header
        env["KBENCH_BENCH_BIND"] = "1"
    if "host" in mode:
        env["KBENCH_HOST_PCH_DIR"] = str(host_root)
    # The CUDA unit as two, kernels apart from torch (python/kbench/split_build.py): on by
    # default in kbench, so every other mode turns it off.
    env["KBENCH_CUDA_SPLIT"] = "on" if "split" in mode else "off"
    if keep is not None:
        env["TORCH_EXTENSIONS_DIR"] = str(keep)
        subprocess.run([sys.executable, "-c", RUNNER, str(candidate)], env=env, capture_output=True, text=True)
        return None
    with tempfile.TemporaryDirectory(prefix="kbench-cold-build-") as extensions:
        env["TORCH_EXTENSIONS_DIR"] = extensions
        start, cpu_before = time.perf_counter(), _children_cpu_s()
        done = subprocess.run([sys.executable, "-c", RUNNER, str(candidate)], env=env,
                              capture_output=True, text=True)
        wall, cpu = time.perf_counter() - start, _children_cpu_s() - cpu_before
        said = [line for line in done.stdout.splitlines() if line.startswith("BUILD")]
        print(f"{mode}: wall {wall:.1f} s, CPU {cpu:.1f} s (rc {done.returncode}) "
              f"{said[0] if said else done.stderr[-800:]}")
        print(ninja_log(extensions))
    return wall, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("candidate", type=Path)
    parser.add_argument("--modes", default="stock,light,light+host,light+host+bind,light+host+pch",
                        help="comma-separated, from " + ", ".join(MODES))
    parser.add_argument("--pch-root", type=Path, help="kbench's PCH cache (default: a fresh one)")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    modes = args.modes.split(",")
    unknown = sorted(set(modes) - set(MODES))
    if unknown or "stock" not in modes:
        parser.error(f"--modes {args.modes}: needs stock (the baseline) and only {', '.join(MODES)}")
    sys.path.insert(0, str(ROOT / "python"))
    from kbench import aten_subset, host_pch, pch

    root = args.pch_root or Path(tempfile.mkdtemp(prefix="kbench-pch-"))
    host_root = Path(tempfile.mkdtemp(prefix="kbench-host-pch-"))
    if any("aten" in m for m in modes):
        print("kbench's ATen/Functions.h:", aten_subset.build(ATEN_ROOT, aten_subset.installed_torch_include()))
    # The host compile's header differs with and without kbench's ATen/Functions.h: one of each.
    for aten in sorted({"+aten" if "aten" in m else "" for m in modes if "host" in m or "pch" in m}):
        prime = "light" + ("+host" if any("host" in m for m in modes) else "") + (
            "+pch" if any("pch" in m for m in modes) else "") + aten
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="kbench-cold-build-prime-") as folder:
            build(args.candidate, prime, root, host_root, keep=folder)
            said = host_pch.build_requests(host_root, [folder]) + pch.build_requests(root, [folder])
        print(f"headers ready{' (with ' + aten[1:] + ')' if aten else ''} in {time.perf_counter() - start:.1f} s "
              f"(a build of their own, then kbench's builders): {said}")
    for run in range(args.runs):
        costs = {mode: build(args.candidate, mode, root, host_root) for mode in modes}
        for index, what in enumerate(("wall", "CPU")):
            ratios = ", ".join(f"{mode} {costs[mode][index] / costs['stock'][index]:.2f}" for mode in modes)
            print(f"run {run + 1}: {what} against stock: {ratios}")


if __name__ == "__main__":
    main()

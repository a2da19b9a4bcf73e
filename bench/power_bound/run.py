"""A power-bound candidate through whole evaluations: does the throttle rule keep samples?

An fp16 matmul of N x N (cuBLAS tensor cores, a few ms per call on an H200) runs long enough at
full power that the GPU lowers its SM clock to its power cap (1440 MHz was read on an H200 after
sustained load, below the 75 % line of 1485 MHz). Blocks timed below that line are dropped; after
each dropped block kbench idles the GPU for `--throttle-recovery` seconds so the clock can come
back. This bench runs the same evaluation with the default pause, without it, and with longer
sampling, and prints per run: samples kept, blocks dropped, SM clock range, NVML's reasons and the
flags. Writes power_bound.json and power_bound.md under --out.
Usage (GPU machine): python3 bench/power_bound/run.py --kbench build-gpu/kbench --out DIR
"""

import argparse
import json
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MATMUL = ROOT / "problems/level1/8_matmul.py"
CANDIDATE = '''"""The reference's own cuBLAS matmul in a class of its own (structural rules only)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
'''
RUNS = {
    "recovery_0.05s": ["--throttle-recovery", "0.05"],
    "recovery_0s": ["--throttle-recovery", "0"],
    "recovery_0.05s_min_time_4s": ["--throttle-recovery", "0.05", "--min-time", "4", "--timing-timeout", "30"],
}


def side_summary(side):
    stats = side.get("stats") or {}
    clock = side.get("sm_clock_mhz") or {}
    return {
        "n": stats.get("n"), "median_us": stats.get("median_us"), "noise_pct": stats.get("noise_pct"),
        "blocks": side.get("blocks"), "dropped": side.get("throttled_samples_dropped"),
        "sm_clock_mhz": [clock.get("min"), clock.get("max"), clock.get("default")],
        "reasons": side.get("clock_reasons"), "stop": side.get("stop_reason"),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kbench", default=str(ROOT / "build-gpu/kbench"))
    parser.add_argument("--out", default="bench-out")
    parser.add_argument("--n", type=int, default=8192)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = MATMUL.read_text()
    if "N = 2048\n" not in text:
        raise SystemExit(f"{MATMUL}: its shape constant changed; update this generator")
    problem = out / f"matmul_{args.n}.py"
    problem.write_text(text.replace("N = 2048\n", f"N = {args.n}\n"))
    candidate = out / "cublas_matmul_candidate.py"
    candidate.write_text(CANDIDATE)
    results = {}
    for name, extra in RUNS.items():
        doc_path = out / f"{name}.json"
        command = [args.kbench, "eval", str(problem), str(candidate), "--device", "cuda",
                   "--precision", "fp16", "--rules", "structural", "--no-compile-baseline",
                   "--json", str(doc_path), "--quiet", *extra]
        start = time.monotonic()
        run = subprocess.run(command, capture_output=True, text=True, timeout=300)
        row = {"command": " ".join(command[1:]), "wall_s": round(time.monotonic() - start, 1)}
        if doc_path.exists():
            doc = json.loads(doc_path.read_text())
            timing = doc.get("timing") or {}
            row.update(status=doc.get("status"), speedup=timing.get("speedup"),
                       flags=[f.get("id") for f in timing.get("flags") or []],
                       flag_messages=[f.get("message") for f in timing.get("flags") or []],
                       message=doc.get("message"),
                       **{side: side_summary(timing[side]) for side in ("reference", "candidate")
                          if timing.get(side)})
        else:
            row["status"] = f"no result (exit {run.returncode}): {run.stderr[-800:]}"
        results[name] = row
        print(name, json.dumps(row), flush=True)
        (out / "power_bound.json").write_text(json.dumps(results, indent=1))
    lines = ["| run | side | n kept | blocks | dropped | SM clock min-max (default) | reasons | median | flags |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, row in results.items():
        for side in ("reference", "candidate"):
            s = row.get(side)
            if not s:
                lines.append(f"| {name} | {side} | {row['status']}: {row.get('message') or ''} | | | | | | |")
                continue
            lo, hi, default = s["sm_clock_mhz"]
            lines.append(f"| {name} | {side} | {s['n']} | {s['blocks']} | {s['dropped']} | {lo}-{hi} ({default}) MHz "
                         f"| {', '.join(s['reasons'] or []) or '-'} | {s['median_us']} µs | {', '.join(row['flags']) or '-'} |")
    (out / "power_bound.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

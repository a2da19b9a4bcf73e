"""Runs `kbench problems check` over the problems, as one batch per variant: one kbench process
checks `--jobs` problems at a time (its workers forked by one warm fork server; on cuda the
timed parts take the GPU one at a time) and appends each report to OUT/checks-DEVICE.jsonl as it
finishes. Smallest problems first. The time budget is kept by killing the batch when it is spent;
a rerun passes `--resume`, so what the file holds is not checked again. Reports an older version
of this script wrote, one file per problem under OUT/checks/, are still read."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def jsonl_path(out_dir: Path, device: str) -> Path:
    return out_dir / f"checks-{device}.jsonl"


def _legacy_path(out_dir: Path, problem, device: str) -> Path:
    return out_dir / "checks" / f"{problem.key}-{device}.json"


def _reports(out_dir: Path, device: str) -> dict:
    """(resolved problem path, variant) -> the newest report of the batch file."""
    reports = {}
    path = jsonl_path(out_dir, device)
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue  # cut short by a killed batch: checked again
            key = (str(Path(row["problem"]["path"]).resolve()), row.get("variant"))
            reports[key] = row
    return reports


_cache = {}


def load_check(out_dir: Path, problem, device: str):
    legacy = _legacy_path(out_dir, problem, device)
    if legacy.exists():
        try:
            rows = json.loads(legacy.read_text())
            return rows[0] if isinstance(rows, list) and rows else rows
        except ValueError:
            pass
    path = jsonl_path(out_dir, device)
    stamp = (path, path.stat().st_mtime_ns if path.exists() else 0)
    if _cache.get("stamp") != stamp:
        _cache.update(stamp=stamp, reports=_reports(out_dir, device))
    return _cache["reports"].get((str(Path(problem.path).resolve()), problem.variant))


# Past this many bytes of trial-0 inputs and weights, a check's scratch holds one trial's files of
# several GiB (outputs, and inputs of an output's shape): fewer at a time, or the disk fills.
LARGE_BYTES = 2**30


def _batch(kbench: str, problems, variant: str, out_dir: Path, args, jobs: int, deadline: float,
           log) -> int:
    command = [kbench, "problems", "check", *[str(p.path) for p in problems], "--device",
               args.device, "--gpu", str(args.gpu), "--variant", variant, "--trials",
               str(args.trials), "--run-timeout", str(args.run_timeout), "--jobs", str(jobs),
               "--jsonl", str(jsonl_path(out_dir, args.device)), "--resume"]
    print(f"checks [{variant}]: {len(problems)} in one batch, {jobs} at a time", file=log,
          flush=True)
    # Its own session, so that the budget's kill takes kbench and whatever shares its group; the
    # workers die with kbench (PR_SET_PDEATHSIG) and the fork server leaves when its socket
    # closes.
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log,
                               start_new_session=True)
    try:
        return process.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        print(f"checks [{variant}]: budget spent, batch killed; a rerun resumes", file=log)
        return -9


def run_checks(kbench: str, problems, probes: dict, out_dir: Path, args, log=sys.stderr) -> None:
    def size(p):
        r = probes.get(p.key, {})
        return (r.get("input_bytes") or 0) + (r.get("weight_bytes") or 0)

    todo = []
    for p in problems:
        r = probes.get(p.key, {})
        if load_check(out_dir, p, args.device) is not None or not r.get("loads"):
            continue  # done already, or cannot load here (the report says why)
        if args.max_bytes and size(p) > args.max_bytes:  # unsized ones run: the check says why
            continue
        todo.append(p)
    todo.sort(key=size)
    deadline = time.monotonic() + args.budget
    print(f"checks: {len(todo)} to run, {args.jobs} at a time, budget {args.budget} s", file=log)
    out_dir.mkdir(parents=True, exist_ok=True)
    # Every variant's small problems first, then the large ones, fewer at a time.
    for large, jobs in ((False, args.jobs), (True, min(args.jobs, args.large_jobs))):
        for variant in sorted({p.variant for p in todo}):
            batch = [p for p in todo if p.variant == variant and (size(p) > LARGE_BYTES) == large]
            if batch and time.monotonic() < deadline:
                _batch(kbench, batch, variant, out_dir, args, jobs, deadline, log)

"""Runs `kbench problems check` once per problem, `--jobs` at a time, each writing its own JSON
file under OUT/checks/ (a file already there is a finished check: a rerun resumes), smallest
problems first, until the time budget is spent. `problems check` checks one problem at a time
itself, so the parallelism is here; each check still uses one GPU (`--gpu`)."""

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def check_path(out_dir: Path, problem, device: str) -> Path:
    return out_dir / "checks" / f"{problem.key}-{device}.json"


def load_check(out_dir: Path, problem, device: str):
    path = check_path(out_dir, problem, device)
    if not path.exists():
        return None
    try:
        rows = json.loads(path.read_text())
        return rows[0] if isinstance(rows, list) and rows else rows
    except ValueError:
        return None  # cut short by a killed run: checked again


def _run_one(kbench: str, problem, out_dir: Path, args) -> dict:
    path = check_path(out_dir, problem, args.device)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.json")
    command = [kbench, "problems", "check", str(problem.path), "--device", args.device,
               "--gpu", str(args.gpu), "--variant", problem.variant, "--trials", str(args.trials),
               "--run-timeout", str(args.run_timeout), "--json", str(partial)]
    started = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True,
                              timeout=args.run_timeout * 3 + 120)
        stderr = done.stderr[-3000:]
        code = done.returncode
    except subprocess.TimeoutExpired:
        stderr, code = "killed: the check ran past three run timeouts", -9
    wall = time.monotonic() - started
    if partial.exists():
        rows = json.loads(partial.read_text())
        row = rows[0] if rows else {}
        partial.unlink()
    else:  # no report: kbench itself failed (usage error or crash) - recorded as such
        row = {"verdict": "not checked", "message": f"kbench problems check exited {code} "
               f"without a report: {stderr.strip().splitlines()[-1] if stderr.strip() else ''}"}
    row["driver"] = {"exit": code, "wall_s": round(wall, 1), "command": command}
    path.write_text(json.dumps([row], indent=1))
    return row


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

    def guarded(p):
        if time.monotonic() > deadline:
            return None
        row = _run_one(kbench, p, out_dir, args)
        print(f"check {p.label} [{p.variant}]: {row.get('verdict')} "
              f"({row['driver']['wall_s']} s)", file=log, flush=True)
        return row

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(guarded, todo))

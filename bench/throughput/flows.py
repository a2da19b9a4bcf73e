"""The two flows bench/throughput compares on one batch, each stopped at a time budget:

- kbench: one `kbench suite` over the batch (its builds run ahead on the CPU cores, one
  measurement lane on the GPU); a result counts when its line reaches the suite's --jsonl.
- KernelBench: its `eval_from_generations` shape: every distinct candidate source precompiled
  in parallel (`build_compile_cache`, one fresh process each), then `eval_kernel_against_ref` in a
  fresh process per candidate, one after another on the GPU."""

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_kbench(kbench, batch, out: Path, budget_s, extra):
    manifest = out / "kbench-suite.json"
    manifest.write_text(json.dumps({"schema": "kbench.suite/1", "entries": [
        {"problem": e["problem"], "candidate": e["candidate"], "device": "cuda"} for e in batch]}))
    jsonl = out / "kbench.jsonl"
    jsonl.unlink(missing_ok=True)
    command = [kbench, "suite", str(manifest), "--device", "cuda", "--jsonl", str(jsonl)] + extra
    start = time.monotonic()
    log = open(out / "kbench-suite.log", "w")
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    done_at = []
    while proc.poll() is None and time.monotonic() - start < budget_s:
        time.sleep(0.2)
        lines = jsonl.read_text().count("\n") if jsonl.exists() else 0
        done_at += [time.monotonic()] * (lines - len(done_at))
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    lines = jsonl.read_text().splitlines() if jsonl.exists() else []
    done_at += [time.monotonic()] * (len(lines) - len(done_at))
    by_candidate = {e["candidate"]: e for e in batch}
    records = []
    for line, at in zip(lines, done_at):
        r = json.loads(line)
        entry = by_candidate.get(r["candidate"]["path"], {})
        records.append({"kind": entry.get("kind"), "fresh": entry.get("fresh"), "at": at - start,
                        "outcome": r["status"], "wall_s": r["wall_s"],
                        "cached_build": bool(r["compile"].get("cached")),
                        "measure_s": (r.get("timing") or {}).get("wall_s")})
    return {"start": start, "end": done_at[-1] if done_at else time.monotonic(), "records": records,
            "command": " ".join(command), "finished_batch": len(lines) == len(batch)}


def _kb_env(kernelbench: Path, deps):
    paths = [str(kernelbench / "src"), str(HERE / "kb_stubs")] + ([str(deps)] if deps else [])
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths))


def _kb_step(python, env, step, entry, build_dir, timeout):
    command = [python, str(HERE / "kb_one.py"), step, entry["problem"], entry["candidate"], str(build_dir)]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    # No JSON line: the process died (a CUDA fault can abort it): that is the candidate's outcome.
    return {"error": f"process exited {done.returncode}: {done.stderr.strip()[-300:]}"}


def _precompile(python, env, batch, builds: Path, jobs):
    """Builds every distinct candidate source apart, `jobs` at once, as eval_from_generations
    does, and records how long that took in builds/precompile.json. One build directory per
    distinct source (eval_from_generations builds every sample apart, so sharing would be in
    KernelBench's favour; in bench/throughput's batch no two sources are alike)."""
    distinct = {}
    for e in batch:
        distinct.setdefault(e["source_sha"], e)
    start = time.monotonic()
    with ThreadPoolExecutor(jobs) as pool:
        built = list(pool.map(lambda e: _kb_step(python, env, "build", e, builds / e["source_sha"], 900),
                              distinct.values()))
    record = {"sources": sorted(distinct), "build_wall_s": time.monotonic() - start,
              "builds_failed": sum(not b.get("compiled") for b in built)}
    builds.mkdir(parents=True, exist_ok=True)
    (builds / "precompile.json").write_text(json.dumps(record))
    return record


def _earlier_precompile(batch, builds: Path):
    """The record of a precompile an earlier run made of every source in `batch`, or None: the
    device allows 600 s a call, and the whole batch's flow takes longer, so a call may
    precompile and the next evaluate on the same machine."""
    try:
        record = json.loads((builds / "precompile.json").read_text())
    except (OSError, ValueError):
        return None
    return record if {e["source_sha"] for e in batch} <= set(record.get("sources", [])) else None


def run_kernelbench(kernelbench: Path, python, deps, batch, out: Path, budget_s, jobs,
                    precompile_only=False):
    env = _kb_env(kernelbench, deps)
    builds = out / "kb-builds"
    run_start = time.monotonic()  # the budget counts this run's own time
    earlier = None if precompile_only else _earlier_precompile(batch, builds)
    precompile = earlier or _precompile(python, env, batch, builds, jobs)
    build_wall = precompile["build_wall_s"]
    # The flow's window opens when the precompile began, also one an earlier run made.
    start = time.monotonic() - build_wall
    records = []
    for e in [] if precompile_only else batch:
        if time.monotonic() - run_start >= budget_s:
            break
        r = _kb_step(python, env, "eval", e, builds / e["source_sha"], 300)
        # KernelBench's verdict is correct or not; a process that printed no result died.
        outcome = "correct" if r.get("correctness") else ("not correct" if "correctness" in r else "no result")
        records.append({"kind": e["kind"], "fresh": e["fresh"], "at": time.monotonic() - start,
                        "outcome": outcome, "wall_s": r.get("wall_s"), "error": r.get("error", "")[:200],
                        "runtime_us": r.get("runtime_us")})
    end = records[-1]["at"] + start if records else time.monotonic()
    return {"start": start, "end": end, "records": records, "build_wall_s": build_wall,
            "builds": len(precompile["sources"]), "builds_failed": precompile["builds_failed"],
            "precompile_from_earlier_run": earlier is not None,
            "finished_batch": len(records) == len(batch)}

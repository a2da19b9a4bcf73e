"""Where each evaluation's wall time went, from kbench's result documents (issue 15).

Reads `kbench suite --jsonl` lines (or `kbench eval --json` files) and prints, per evaluation,
its status and wall time, then one line per worker: when it started after the evaluation
began, how long it lived, forked or spawned, and each protocol request it answered (count,
first sent after the worker started, seconds spent answering). What a worker's requests do not
cover is its start and the time it waited for the orchestrator.
Usage: python3 bench/throughput/breakdown.py RESULTS.jsonl [MORE.jsonl | RESULT.json ...]
Standard library only, so that it runs on the GPU machine's and CI's Python alike.
"""

import json
import sys
from pathlib import Path


def documents(path: Path):
    text = path.read_text()
    if path.suffix == ".json":
        yield json.loads(text)
        return
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as error:
                print(f"{path}:{number}: skipped, not JSON ({error})", file=sys.stderr)


def describe(result) -> list[str]:
    timing = result.get("timing") or {}
    compile_ = result.get("compile") or {}
    head = (f"{Path(result['problem']['path']).name} x {Path(result['candidate']['path']).name}: "
            f"{result['status']}, wall {result['wall_s']:.2f} s, build "
            f"{'cached' if compile_.get('cached') else 'fresh'}")
    if timing.get("wall_s") is not None:
        head += f", measure {timing['wall_s']:.2f} s"
        samples = len((timing.get("candidate") or {}).get("samples_us") or [])
        if samples:
            head += f" ({samples} candidate samples, stopped: {timing.get('stop_reason')})"
    lines = [head]
    for phase in result.get("phases", []):
        requests = ", ".join(
            f"{q['op']} x{q['count']} @{q['first_at_s']:.2f} {q['seconds']:.2f} s"
            for q in phase.get("requests", []))
        answered = sum(q["seconds"] for q in phase.get("requests", []))
        lines.append(
            f"  {phase['phase']:<12} at {phase.get('started_at_s', 0):6.2f} s, lived "
            f"{phase['wall_s']:6.2f} s ({phase.get('started') or '?'}), answering {answered:.2f} s"
            f"{': ' + requests if requests else ''}")
    return lines


def main(argv):
    if not argv:
        sys.exit(__doc__.strip().splitlines()[-2])
    for name in argv:
        path = Path(name)
        if not path.exists():
            sys.exit(f"{path}: no such file (a kbench suite --jsonl or kbench eval --json output)")
        for result in documents(path):
            print("\n".join(describe(result)))


if __name__ == "__main__":
    main(sys.argv[1:])

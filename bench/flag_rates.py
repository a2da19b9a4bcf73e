#!/usr/bin/env python3
"""How often each timing flag fires on honest candidates, from the results of a suite run.

A flag that fires on honest, conventional code tells a reader nothing (issue 14, item 8). This
reads result documents (`kbench suite MANIFEST --jsonl FILE`, one per line, or `kbench eval
--json FILE`, or folders of them), takes a result as honest when its manifest entry expects
`ok`, and prints per flag how many honest timed results carry it, per device, and which ones;
then the flags the other results (exploits, expected failures) carry, so that an exploit that
must stay flagged can be checked in the same run.

    build/kbench suite examples/examples.json --jsonl OUT/suite.jsonl
    python3 bench/flag_rates.py OUT/suite.jsonl --manifest examples/examples.json \\
        --expect-zero off_stream_work,unstable_timing

--expect-zero makes the exit status 1 when an honest result carries one of the flags named.
Standard library only: it runs wherever the results are.
"""

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

# The flag ids of docs/result-schema.md, so that a flag that never fired shows as 0.
KNOWN_FLAGS = ("no_gpu_work", "off_stream_work", "below_roofline_floor", "unstable_timing",
               "throttled", "speedup_above_10x", "launch_bound")


def read_results(paths):
    """Every result document under `paths`: .jsonl files (one per line), .json files, folders."""
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix in (".json", ".jsonl"))
        elif path.is_file():
            files.append(path)
        else:
            sys.exit(f"flag_rates: {path}: no such file or folder")
    results = []
    for path in files:
        text = path.read_text()
        chunks = text.splitlines() if path.suffix == ".jsonl" else [text]
        for number, chunk in enumerate(chunks, 1):
            if not chunk.strip():
                continue
            try:
                doc = json.loads(chunk)
            except json.JSONDecodeError as error:
                sys.exit(f"flag_rates: {path}:{number}: not JSON ({error}); pass the suite's --jsonl "
                         "file or eval --json files")
            if isinstance(doc, dict) and str(doc.get("schema", "")).startswith("kbench.eval/"):
                results.append(doc)
    return results


def _key(problem, candidate):
    return (os.path.realpath(problem), os.path.realpath(candidate))


def read_expectations(manifests):
    """(problem, candidate) real paths -> the status the manifest expects."""
    expect = {}
    for manifest in map(Path, manifests):
        try:
            doc = json.loads(manifest.read_text())
            entries = doc["entries"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            sys.exit(f"flag_rates: {manifest}: not a suite manifest with 'entries' ({error})")
        if doc.get("schema", "kbench.suite/1") != "kbench.suite/1":
            sys.exit(f"flag_rates: {manifest}: schema {doc.get('schema')!r}, not kbench.suite/1: pass the "
                     "manifest the suite ran (its 'expect' says which results are honest)")
        for index, entry in enumerate(entries):
            if "problem" not in entry or "candidate" not in entry:
                sys.exit(f"flag_rates: {manifest}: entries[{index}] names no problem or candidate")
            base = manifest.parent
            expect[_key(base / entry["problem"], base / entry["candidate"])] = entry.get("expect", "ok")
    return expect


def short(path):
    parts = Path(path).parts
    return "/".join(parts[-2:]) if len(parts) >= 2 else str(path)


def device_of(doc):
    return "cuda" if str(doc.get("config", {}).get("device", "")).startswith("cuda") else "cpu"


def tally(results, expect):
    """Honest timed results per device, the flags they carry, and the other results' flags."""
    honest = defaultdict(list)  # device -> [(candidate, flags)]
    failed_honest, others, unknown = [], [], []
    for doc in results:
        problem = doc.get("problem", {}).get("path", "")
        candidate = doc.get("candidate", {}).get("path", "")
        expected = expect.get(_key(problem, candidate))
        timing = doc.get("timing") or {}
        flags = [(f.get("id", "?"), f.get("message", "")) for f in timing.get("flags") or []]
        name = short(candidate)
        if expected is None:
            unknown.append(name)
        elif expected != "ok":
            others.append((name, expected, doc.get("status"), flags))
        elif doc.get("status") != "ok":
            failed_honest.append((name, doc.get("status"), doc.get("message", "")))
        elif timing.get("measured"):
            honest[device_of(doc)].append((name, flags))
    return honest, failed_honest, others, unknown


def report(honest, failed_honest, others, unknown, show_messages):
    lines = []
    devices = sorted(honest)
    seen = {fid for runs in honest.values() for _, flags in runs for fid, _ in flags}
    ids = list(KNOWN_FLAGS) + sorted(seen - set(KNOWN_FLAGS))
    totals = ", ".join(f"{d} {len(honest[d])}" for d in devices) or "none"
    lines.append(f"honest timed results (expect ok, status ok): {totals}")
    header = f"{'flag':<22}" + "".join(f"{d + ' results, rate':>23}" for d in devices) + "  carried by"
    lines.append(header)
    for fid in ids:
        row = f"{fid:<22}"
        carriers = []
        for d in devices:
            runs = honest[d]
            # A result counts once, though throttled can come once per side.
            count = sum(1 for _, flags in runs if any(f == fid for f, _ in flags))
            rate = 100.0 * count / len(runs) if runs else 0.0
            row += f"{count:>8} / {len(runs):<4} {rate:5.1f} %"
            carriers += [(d, name, msg) for name, flags in runs for f, msg in flags if f == fid]
        lines.append(row + "  " + ", ".join(sorted({f"{name} ({d})" for d, name, _ in carriers})))
        if show_messages:
            for d, name, msg in carriers:
                lines.append(f"    {name} ({d}): {msg}")
    if failed_honest:
        lines.append("")
        lines.append("honest results that did not come back ok (not counted above):")
        lines += [f"  {name}: {status}: {message[:160]}" for name, status, message in failed_honest]
    if others:
        lines.append("")
        lines.append("other results (the manifest expects a status other than ok), with their flags:")
        for name, expected, status, flags in others:
            carried = ", ".join(fid for fid, _ in flags) or "none"
            lines.append(f"  {name}: expected {expected}, got {status}; flags: {carried}")
    if unknown:
        lines.append("")
        lines.append(f"results no manifest entry names (left out): {', '.join(sorted(set(unknown)))}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", help="suite --jsonl files, eval --json files, or folders of them")
    parser.add_argument("--manifest", action="append",
                        help="suite manifest(s) whose 'expect' says which results are honest "
                             "(default: examples/examples.json)")
    parser.add_argument("--messages", action="store_true", help="print each honest carrier's flag sentence")
    parser.add_argument("--expect-zero", default="",
                        help="comma-separated flag ids: exit 1 when an honest result carries one")
    args = parser.parse_args(argv)
    manifests = args.manifest or [str(Path(__file__).resolve().parents[1] / "examples" / "examples.json")]
    results = read_results(args.results)
    if not results:
        sys.exit("flag_rates: no kbench.eval result documents found in " + ", ".join(args.results))
    honest, failed_honest, others, unknown = tally(results, read_expectations(manifests))
    print(report(honest, failed_honest, others, unknown, args.messages))
    zero = {f for f in args.expect_zero.split(",") if f}
    broken = sorted({(fid, name) for runs in honest.values() for name, flags in runs
                     for fid, _ in flags if fid in zero})
    if broken:
        print("\nexpected on no honest result: " + "; ".join(f"{fid} on {name}" for fid, name in broken))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The folders of src/ and the includes between them, checked against the layering.

Reads every `#include "folder/file.hpp"` under src/, draws the folder graph, and fails when:
- the graph has a cycle;
- a folder includes one its layer may not use (LAYERS below: an include goes to a lower layer,
  or to a sibling of the middle layer);
- a folder of src/ is missing from LAYERS (a new folder takes a place in the layering on
  purpose, not by accident);
- with --doc, the graph in docs/architecture.md (between the two markers) is not the one the
  includes give, so the page cannot fall behind the code.

`--print` writes the graph block for the page. Run by CTest (tests/CMakeLists.txt) as
`architecture_layers`.
"""

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

# Layer of each folder. 0: data and leaf utilities; 1: the mechanisms; 2: what drives them
# (pipeline), renders their results (report), keeps them (store) or runs inside the sandbox
# (worker); 3: the engines of wave 2's front ends, on top of those (service: the evaluation
# service; agent; web; queue: the Redis work queue); 4: the command line.
LAYERS = {
    "core": 0,
    "sched": 1,
    "compare": 1,
    "measure": 1,
    "counters": 1,
    "sandbox": 1,
    "checks": 1,
    "pipeline": 2,
    "report": 2,
    "store": 2,
    "worker": 2,
    # wave 2's front ends, linked into `kbench` only (CMakeLists.txt, kbench_forbid_links)
    "service": 3,
    "queue": 3,
    "agent": 3,
    "web": 3,
    "cli": 4,
}
# Siblings in a layer may include each other (without a cycle) only in the middle layer: the
# mechanisms share small helpers (measure and counters use sched's device probe). Elsewhere a
# same-layer include is a missing cut (the worker must never include the pipeline).
SIBLINGS_ALLOWED = {1}

BEGIN = "<!-- layers:begin (tests/architecture/check_layers.py --print) -->"
END = "<!-- layers:end -->"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_0-9]+)/[^"]+"', re.M)


def folder_graph(src: Path):
    edges = defaultdict(set)  # (from, to) -> files
    folders = set()
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".h", ".cc", ".in") or not path.is_file():
            continue
        folder = path.relative_to(src).parts[0]
        folders.add(folder)
        for target in INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace")):
            if target != folder and (src / target).is_dir():
                edges[(folder, target)].add(str(path.relative_to(src.parent)))
    return folders, edges


def find_cycle(folders, edges):
    graph = defaultdict(list)
    for a, b in edges:
        graph[a].append(b)
    state = {}  # 1 on the stack, 2 done

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, stack)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(folders):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def problems_of(folders, edges):
    problems = []
    for folder in sorted(folders - LAYERS.keys()):
        problems.append(f"src/{folder}/ has no layer: add it to LAYERS in {Path(__file__).name}")
    for (a, b), files in sorted(edges.items()):
        if a not in LAYERS or b not in LAYERS:
            continue
        la, lb = LAYERS[a], LAYERS[b]
        if lb > la or (lb == la and la not in SIBLINGS_ALLOWED):
            problems.append(
                f"{a} (layer {la}) includes {b} (layer {lb}): {', '.join(sorted(files)[:3])}")
    cycle = find_cycle(folders, edges)
    if cycle:
        where = "; ".join(
            f"{a} -> {b} in {sorted(edges[(a, b)])[0]}" for a, b in zip(cycle, cycle[1:]))
        problems.append("cycle: " + " -> ".join(cycle) + f" ({where})")
    return problems


def graph_block(folders, edges):
    lines = [BEGIN, "```mermaid", "flowchart TD"]
    for a, b in sorted(edges):
        lines.append(f"  {a} --> {b}")
    for folder in sorted(f for f in folders if not any(f in e for e in edges)):
        lines.append(f"  {folder}")
    lines += ["```", END]
    return "\n".join(lines)


def doc_problem(doc: Path, text: str, block: str):
    """What is wrong with the graph in the page `doc` (its `text`), or None."""
    if BEGIN not in text or END not in text:
        return f"{doc}: no graph between the markers {BEGIN!r} and {END!r}"
    if text[text.index(BEGIN):text.index(END) + len(END)] != block:
        return (f"{doc}: the folder graph is out of date; replace the block with the output of "
                f"`python3 tests/architecture/check_layers.py --print`")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[2] / "src")
    parser.add_argument("--doc", type=Path, help="docs/architecture.md, whose graph must match")
    parser.add_argument("--print", action="store_true", help="print the graph block")
    args = parser.parse_args()
    folders, edges = folder_graph(args.src)
    if args.print:
        print(graph_block(folders, edges))
        return 0
    problems = problems_of(folders, edges)
    if args.doc:
        found = doc_problem(args.doc, args.doc.read_text(encoding="utf-8"),
                            graph_block(folders, edges))
        if found:
            problems.append(found)
    for problem in problems:
        print(f"check_layers: {problem}", file=sys.stderr)
    if not problems:
        print(f"check_layers: {len(folders)} folders, {len(edges)} edges, no cycle, layering holds")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

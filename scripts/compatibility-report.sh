#!/usr/bin/env bash
# The compatibility report of issue 16 (docs/compatibility.md): every problem of KernelBench
# levels 1-4 and PopcornBench's popcorn/popcorn2 folders loaded, checked with
# `kbench problems check`, KernelBench's own candidates, popcorn_pri against PopcornBench's.
# Usage: scripts/compatibility-report.sh KERNELBENCH_ROOT POPCORNBENCH_ROOT [--device cpu|cuda]
#          [--jobs N] [--budget SECONDS] [--trials N] [--out DIR] ...   (--help for all)
# Resumable: rerun the same command and finished probes and checks are kept (under --out).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="${KBENCH_PYTHON:-$HOME/.cache/kbench/venv/bin/python}"
[ -x "$py" ] || py="$(command -v python3)"
export PYTHONPATH="$root/python:$root/${KBENCH_BUILD:-build}/python${PYTHONPATH:+:$PYTHONPATH}"
exec "$py" "$root/scripts/compat/main.py" "$@"

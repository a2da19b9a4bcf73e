#!/usr/bin/env bash
# `make run`'s second half: the main job offline. Plays the recorded agent run in
# examples/agent/ (kbench agent --model replay:FILE: no model server, no network; the tools
# really compile, check and evaluate), then writes the static report of its store and says
# which page to open. The CUDA recording where a GPU answers, the CPU one elsewhere.
# Usage: scripts/replay-demo.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${KBENCH_BUILD:-build}}
kbench=$build/kbench
demo=$build/demo
if nvidia-smi -L > /dev/null 2>&1; then
  device=cuda recording=examples/agent/masked_broadcast_cuda.json
  problem=problems/popcorn/1_broadcast_masked_from_row0.py
else
  device=cpu recording=examples/agent/masked_broadcast_cpu.json problem=examples/agent/problem_cpu.py
fi
rm -rf "$demo"
mkdir -p "$demo"
echo "make run: playing the recorded agent run ($recording, $device; no model server)"
"$kbench" agent "$problem" --model "replay:$recording" --device "$device" --variant popcorn \
  --db "$demo/results.sqlite" | tee "$demo/agent.txt"
run=$(grep -o 'run [0-9a-f]\{16\}' "$demo/agent.txt" | head -1 | cut -d' ' -f2)
"$kbench" report --db "$demo/results.sqlite" --out "$demo/report" > /dev/null
echo
echo "make run: the run's page:   $demo/report/runs/$run.html   (open it in a browser)"
echo "make run: the whole report: $demo/report/index.html"
echo "make run: served live:      $kbench serve --db $demo/results.sqlite, then http://127.0.0.1:8080/runs/$run"

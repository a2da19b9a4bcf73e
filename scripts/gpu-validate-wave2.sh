#!/usr/bin/env bash
# One call on the GPU machine for the front ends (issues 17-19): the store, `kbench serve` and
# the client, `kbench agent` against the scripted model server (one run, then 8 at once on the
# one GPU), and `kbench report` over the store they filled. Builds kbench first where
# $KBENCH_BUILD has none. Leaves wave2.tar.gz (logs, the store, the static report) in $OUT.
# Usage (device tool, carry [".device-carry"] after scripts/gpu-deps.sh here):
#   bash scripts/gpu-validate-wave2.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
work=$(mktemp -d /tmp/kbench-wave2-XXXX)
mkdir -p "$out" "$work/logs"
export KBENCH_BUILD=${KBENCH_BUILD:-build-gpu}
[ -d .device-carry/deps ] && export KBENCH_DEPS_DIR=$PWD/.device-carry/deps
kbench=$KBENCH_BUILD/kbench
log=$work/logs/summary.txt
say() { echo "$*" | tee -a "$log"; }
pack() { tar -czf "$out/wave2.tar.gz" -C "$work" logs site 2>/dev/null || tar -czf "$out/wave2.tar.gz" -C "$work" logs; }
trap pack EXIT

say "$(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
if [ ! -x "$kbench" ]; then
  start=$(date +%s)
  scripts/setup.sh > "$work/logs/build.log" 2>&1 || { say "build failed"; tail -30 "$work/logs/build.log"; exit 1; }
  say "build: $(( $(date +%s) - start )) s"
fi
db=$work/results.sqlite
problem=problems/level1/1_relu.py
candidate=examples/cuda/level1_relu.py

# 1. The agent, against the scripted model server: compile, check, profile, submit the CUDA ReLU.
python3 - "$candidate" "$work/scenario.json" <<'PY'
import json, sys
code = open(sys.argv[1]).read()
args = json.dumps({"kernel_code": code})
turn = lambda tool, i: {"content": f"calling {tool}", "reasoning": f"step {i}: {tool}",
                        "tool_calls": [{"id": f"call_{i}", "name": tool, "arguments": args}],
                        "finish_reason": "tool_calls", "usage": {"input": 2000, "output": 400}}
tools = ["compile_kernel", "run_correctness", "profile_kernel", "submit_kernel"]
json.dump({"turns": [turn(t, i) for i, t in enumerate(tools)]}, open(sys.argv[2], "w"))
PY
python3 tests/fakes/model_server.py --scenario "$work/scenario.json" --port 0 > "$work/logs/model_server.txt" 2>&1 &
server=$!
for _ in $(seq 50); do grep -q "listening on" "$work/logs/model_server.txt" && break; sleep 0.1; done
endpoint=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/logs/model_server.txt" | head -1)
start=$(date +%s.%N)
timeout 240 "$kbench" agent "$problem" --endpoint "$endpoint" --model scripted --tier all \
  --device cuda --db "$db" > "$work/logs/agent-one.txt" 2>&1
say "agent, one run: rc=$? $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
tail -4 "$work/logs/agent-one.txt" | tee -a "$log"
start=$(date +%s.%N)
timeout 300 "$kbench" agent "$problem" --endpoint "$endpoint" --model scripted --tier all \
  --device cuda --samples 8 --concurrency 8 --db "$db" > "$work/logs/agent-eight.txt" 2>&1
say "agent, 8 runs at once: rc=$? $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
tail -12 "$work/logs/agent-eight.txt" | tee -a "$log"
kill "$server" 2>/dev/null

# 2. kbench serve on the GPU and the client: an evaluation with a reward, then the same again
#    (answered from the store).
if "$kbench" serve --help > /dev/null 2>&1 && ! "$kbench" serve --help 2>&1 | grep -q "built without"; then
  "$kbench" serve --db "$db" --port 0 --jobs 2 > "$work/logs/serve.txt" 2> "$work/logs/serve-err.txt" &
  serve=$!
  for _ in $(seq 100); do grep -q "listening on" "$work/logs/serve.txt" && break; sleep 0.2; done
  url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/logs/serve.txt" | head -1)
  PYTHONPATH=python timeout 240 python3 - "$url" "$problem" "$candidate" <<'PY' 2>&1 | tee -a "$log"
import sys, time
from kbench_client import evaluate
url, problem, candidate = sys.argv[1:]
for attempt in ("first", "repeat"):
    start = time.monotonic()
    answer = evaluate(problem, candidate, url=url, reward="kevin", device="cuda")
    r = answer["result"]
    print(f"serve {attempt}: {answer['state']} cached={answer.get('cached')} status={r['status']} "
          f"speedup={r['timing'].get('speedup')} reward={answer.get('reward')} "
          f"{time.monotonic() - start:.1f} s")
PY
  curl -s -o "$work/logs/leaderboard.html" -D "$work/logs/leaderboard-headers.txt" "$url/leaderboard"
  say "GET /leaderboard: $(head -1 "$work/logs/leaderboard-headers.txt")"
  kill "$serve"
else
  say "kbench serve: not built here ($("$kbench" serve --help 2>&1 | head -1))"
fi

# 3. The store, shown and exported, and the static report.
"$kbench" export --db "$db" --format csv > "$work/logs/export.csv" 2>&1
say "stored evaluations: $(( $(wc -l < "$work/logs/export.csv") - 1 ))"
"$kbench" report --db "$db" --out "$work/site" > "$work/logs/report.txt" 2>&1
say "kbench report: rc=$? $(cat "$work/logs/report.txt" | tail -1)"
cp "$db" "$work/logs/" 2>/dev/null
